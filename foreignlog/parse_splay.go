package foreignlog

import (
	"io"
	"regexp"
	"strconv"
	"time"
)

// splayParser reads the log of a Lua Raft run on the Splay testbed
// (seed 000): "2019-06-04 06:53:40.8473 (6)  ANIM STATE 5 : leader : 1". The
// number in parentheses is the Splay daemon; the node is the number after
// the ANIM keyword.
type splayParser struct{}

var (
	splayLine  = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) \((\d+)\)\s+(.*)$`)
	splayStart = regexp.MustCompile(`^ANIM START (\S+)`)
	splayState = regexp.MustCompile(`^ANIM STATE (\S+) : (\w+) : (\d+)(?:\.\d*)?\s*$`)
	splayCrash = regexp.MustCompile(`^CRASH NOW (\S+)`)
)

// Name implements Parser.
func (splayParser) Name() string { return "splay" }

// Detect implements Parser.
func (splayParser) Detect(first []string) bool {
	return countMatches(first, splayLine.MatchString) > 0
}

// Parse implements Parser. "ANIM STATE n : candidate : t" is logged before
// the candidate increments its term (the next line of that node is "leader :
// t+1"), so a candidate event gets term t+1. "RECOVERY CRASH" is recognised
// but the restart is the "ANIM START" that follows it.
func (splayParser) Parse(r io.Reader) ([]Event, Stats, error) {
	var evs []Event
	var st Stats
	err := scanLines(r, &st, func(n int, line string) bool {
		m := splayLine.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		t, err := time.Parse("2006-01-02 15:04:05.999999999", m[1])
		if err != nil {
			return false
		}
		msg := m[3]
		ev := Event{Time: t, Line: n}
		switch {
		case splayState.MatchString(msg):
			s := splayState.FindStringSubmatch(msg)
			term, err := strconv.Atoi(s[3])
			if err != nil {
				return false
			}
			ev.Node, ev.Kind, ev.Role, ev.Term = s[1], KindRole, Role(s[2]), term
			switch ev.Role {
			case Candidate:
				ev.Term++
			case Follower, Leader:
			default:
				return false
			}
		case splayStart.MatchString(msg):
			ev.Node, ev.Kind = splayStart.FindStringSubmatch(msg)[1], KindStart
		case splayCrash.MatchString(msg):
			ev.Node, ev.Kind = splayCrash.FindStringSubmatch(msg)[1], KindCrash
		default:
			return true
		}
		evs = append(evs, ev)
		return true
	})
	return evs, st, err
}
