package foreignlog

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// courseParser reads the debug log of a student's Raft for MIT 6.5840
// (6.824) (seed 003): "2024/05/19 09:50:28 server[2]has vote for himself,
// Term is:122". The state numbers of its "local state is:" lines are 1
// leader, 2 follower, 3 candidate.
type courseParser struct{}

var (
	courseLine     = regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?) server\[(\d+)\],?\s*(.*)$`)
	courseSelfVote = regexp.MustCompile(`has vote for himself, Term is:(\d+)`)
	courseLeader   = regexp.MustCompile(`become a leader`)
	courseTicker   = regexp.MustCompile(`local state is:(\d), local Term is:(\d+)`)
	courseFollower = regexp.MustCompile(`args term is:(\d+) .*make self to follower`)
	courseTermUp   = regexp.MustCompile(`change local term from:\d+ to:(\d+)`)
	courseGranted  = regexp.MustCompile(`has finish request vote, request server is:(\d+), args Term is:(\d+), result granted is:true`)
	courseStates   = map[string]Role{"1": Leader, "2": Follower, "3": Candidate}
)

// Name implements Parser.
func (courseParser) Name() string { return "course" }

// Detect implements Parser.
func (courseParser) Detect(first []string) bool {
	return countMatches(first, courseLine.MatchString) > 0
}

// Parse implements Parser. "become a leader" carries no term; it is the
// term the node last logged. Indented lines continue the previous line.
func (courseParser) Parse(r io.Reader) ([]Event, Stats, error) {
	var evs []Event
	var st Stats
	var last time.Time
	terms := map[string]int{}
	err := scanLines(r, &st, func(n int, line string) bool {
		m := courseLine.FindStringSubmatch(line)
		if m == nil {
			note, ok := goTestLine(line)
			if note != "" {
				evs = append(evs, Event{Time: last, Kind: KindNote, Text: note, Line: n})
				return true
			}
			return ok || (n > 1 && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")))
		}
		t, err := time.Parse("2006/01/02 15:04:05.999999999", m[1])
		if err != nil {
			return false
		}
		last = t
		node, msg := m[2], m[3]
		ev := Event{Time: t, Node: node, Line: n, Kind: KindRole}
		bad := false
		atoi := func(s string) int {
			v, err := strconv.Atoi(s)
			bad = bad || err != nil
			return v
		}
		switch {
		case courseSelfVote.MatchString(msg):
			ev.Role, ev.Term = Candidate, atoi(courseSelfVote.FindStringSubmatch(msg)[1])
			if bad {
				return false
			}
			evs = append(evs, ev)
			ev.Kind, ev.Role, ev.For = KindVote, "", node
		case courseLeader.MatchString(msg):
			ev.Role, ev.Term = Leader, terms[node]
		case courseTicker.MatchString(msg):
			s := courseTicker.FindStringSubmatch(msg)
			role, ok := courseStates[s[1]]
			if !ok {
				return true
			}
			ev.Role, ev.Term = role, atoi(s[2])
		case courseFollower.MatchString(msg):
			ev.Role, ev.Term = Follower, atoi(courseFollower.FindStringSubmatch(msg)[1])
		case courseTermUp.MatchString(msg):
			ev.Role, ev.Term = Follower, atoi(courseTermUp.FindStringSubmatch(msg)[1])
		case courseGranted.MatchString(msg):
			s := courseGranted.FindStringSubmatch(msg)
			ev.Kind, ev.For, ev.Term = KindVote, s[1], atoi(s[2])
		default:
			return true
		}
		if bad {
			return false // a term too large for an int
		}
		terms[node] = ev.Term
		evs = append(evs, ev)
		return true
	})
	return evs, st, err
}
