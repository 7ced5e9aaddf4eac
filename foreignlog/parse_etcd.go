package foreignlog

import (
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// etcdParser reads the log of etcd's raft library as raftexample and trace
// harnesses print it (seed 002): "raft2021/05/06 22:26:15 INFO: 1 became
// leader at term 10", interleaved with the harness's own lines ("Ignored
// event {...}", "----{...}", "debug state: ...", "debug soup: ...").
type etcdParser struct{}

var (
	etcdRaftLine = regexp.MustCompile(`^(?:raft)?(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (?:INFO|WARN|WARNING|DEBUG|ERROR|PANIC|FATAL): (.*)$`)
	etcdStdLine  = regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?) `)
	etcdBecame   = regexp.MustCompile(`^(\S+) became (follower|candidate|pre-candidate|leader) at term (\d+)`)
	etcdVote     = regexp.MustCompile(`^(\S+) \[[^\]]*\] cast Msg(?:Pre)?Vote for (\S+) \[[^\]]*\] at term (\d+)`)
	etcdConf     = regexp.MustCompile(`^(\S+) switched to configuration voters=\(([^)]*)\)(?:&&\([^)]*\))?(?: learners=\(([^)]*)\))?`)
	etcdHarness  = []string{"Ignored event ", "----{", "debug state:", "debug soup:"}
)

// Name implements Parser.
func (etcdParser) Name() string { return "etcd-trace" }

// Detect implements Parser: a line of raft's logger with a level.
func (etcdParser) Detect(first []string) bool {
	return countMatches(first, etcdRaftLine.MatchString) > 0
}

// Parse implements Parser. Lines without a time get the last time seen.
// Pre-candidates are reported as candidates of the term they would start.
// "switched to configuration voters=(1 2 3) learners=(4)" is a conf event
// (etcd prints it when a node restores or applies a configuration); of a
// joint configuration, "voters=(1 2 3)&&(1 2)", the incoming voters are
// kept.
func (etcdParser) Parse(r io.Reader) ([]Event, Stats, error) {
	var evs []Event
	var st Stats
	var last time.Time
	err := scanLines(r, &st, func(n int, line string) bool {
		m := etcdRaftLine.FindStringSubmatch(line)
		if m == nil {
			if s := etcdStdLine.FindStringSubmatch(line); s != nil {
				if t, err := time.Parse("2006/01/02 15:04:05.999999999", s[1]); err == nil {
					last = t
					return true
				}
				return false
			}
			for _, p := range etcdHarness {
				if strings.HasPrefix(line, p) {
					return true
				}
			}
			note, ok := goTestLine(line)
			if note != "" {
				evs = append(evs, Event{Time: last, Kind: KindNote, Text: note, Line: n})
			}
			return ok
		}
		t, err := time.Parse("2006/01/02 15:04:05.999999999", m[1])
		if err != nil {
			return false
		}
		last = t
		if b := etcdBecame.FindStringSubmatch(m[2]); b != nil {
			term, err := strconv.Atoi(b[3])
			if err != nil {
				return false
			}
			role := Role(b[2])
			if role == "pre-candidate" {
				role, term = Candidate, term+1
			}
			evs = append(evs, Event{Time: t, Node: b[1], Kind: KindRole, Role: role, Term: term, Line: n})
		} else if c := etcdConf.FindStringSubmatch(m[2]); c != nil {
			voters, ok1 := etcdIDs(c[2])
			learners, ok2 := etcdIDs(c[3])
			if !ok1 || !ok2 {
				return false
			}
			evs = append(evs, Event{Time: t, Node: c[1], Kind: KindConf, Voters: voters, Learners: learners, Line: n})
		} else if v := etcdVote.FindStringSubmatch(m[2]); v != nil {
			term, err := strconv.Atoi(v[3])
			if err != nil {
				return false
			}
			evs = append(evs, Event{Time: t, Node: v[1], Kind: KindVote, For: v[2], Term: term, Line: n})
		}
		return true
	})
	return evs, st, err
}

// etcdIDs reads the members of a configuration as etcd prints them,
// "1 2 3" in decimal, and names them as its other lines do, in hex (etcd
// logs node IDs with %x), sorted by ID. false when one is not a number.
func etcdIDs(list string) ([]string, bool) {
	var ids []uint64
	for _, f := range strings.Fields(list) {
		id, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, false
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		out = append(out, strconv.FormatUint(id, 16))
	}
	return out, true
}
