package raftlog

import (
	"encoding/json"
	"io"
	"strings"
	"time"
)

// chaosParser reads the event log of chaos-node (events.jsonl, CONTRACT.md):
// one JSON object a line with time, node and event.
type chaosParser struct{}

// chaosLine is one line of events.jsonl.
type chaosLine struct {
	Time  *time.Time `json:"time"`
	Node  string     `json:"node"`
	Event string     `json:"event"`
	Role  string     `json:"role"`
	Term  int        `json:"term"`
	For   string     `json:"for"`
	Index int        `json:"index"`
}

// chaosKinds maps the event names of events.jsonl to kinds.
var chaosKinds = map[string]Kind{
	"start": KindStart, "stop": KindStop, "crash": KindCrash, "role": KindRole, "vote": KindVote,
	"commit": KindCommit, "apply": KindApply, "snapshot": KindSnapshot, "restore": KindRestore,
}

// Name implements Parser.
func (chaosParser) Name() string { return "chaos" }

// Detect implements Parser: the first non-blank line is a JSON object with
// time, node and event.
func (chaosParser) Detect(first []string) bool {
	for _, l := range first {
		if strings.TrimSpace(l) == "" {
			continue
		}
		_, ok := parseChaosLine(l)
		return ok
	}
	return false
}

// parseChaosLine decodes one line; unknown events and roles are rejected.
func parseChaosLine(line string) (Event, bool) {
	var cl chaosLine
	if err := json.Unmarshal([]byte(line), &cl); err != nil || cl.Time == nil || cl.Node == "" {
		return Event{}, false
	}
	kind, ok := chaosKinds[cl.Event]
	if !ok {
		return Event{}, false
	}
	ev := Event{Time: *cl.Time, Node: cl.Node, Kind: kind, Term: cl.Term, For: cl.For, Index: cl.Index}
	if kind == KindRole {
		switch Role(cl.Role) {
		case Follower, PreCandidate, Candidate, Leader:
			ev.Role = Role(cl.Role)
		default:
			return Event{}, false
		}
	}
	return ev, true
}

// Parse implements Parser.
func (chaosParser) Parse(r io.Reader) ([]Event, Stats, error) {
	var evs []Event
	var st Stats
	err := scanLines(r, &st, func(n int, line string) bool {
		ev, ok := parseChaosLine(line)
		if ok {
			ev.Line = n
			evs = append(evs, ev)
		}
		return ok
	})
	return evs, st, err
}
