package foreignlog

import (
	"io"
	"math"
	"strings"

	"chaos/eventlog"
)

// chaosParser reads the event log of chaos-node (events.jsonl, see
// package eventlog): one JSON object a line with time, node and event.
type chaosParser struct{}

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

// parseChaosLine decodes one line with eventlog's line decoding; unknown
// events and roles are rejected.
func parseChaosLine(line string) (Event, bool) {
	e, err := eventlog.ParseLine([]byte(line))
	if err != nil {
		return Event{}, false
	}
	return FromEventLog(e)
}

// FromEventLog returns a chaos-node event in the format-independent form,
// or false for an event name or role this package does not know, or a
// term or index beyond int. The line number and a conf event's members
// and change are kept, the hash and the start event's entries and bugs
// are not.
func FromEventLog(e eventlog.Event) (Event, bool) {
	var kind Kind
	switch e.Event {
	case eventlog.KindStart:
		kind = KindStart
	case eventlog.KindStop:
		kind = KindStop
	case "crash": // chaos-node writes none; a harness noting a kill may
		kind = KindCrash
	case eventlog.KindRole:
		kind = KindRole
	case eventlog.KindVote:
		kind = KindVote
	case eventlog.KindCommit:
		kind = KindCommit
	case eventlog.KindApply:
		kind = KindApply
	case eventlog.KindSnapshot:
		kind = KindSnapshot
	case eventlog.KindRestore:
		kind = KindRestore
	case eventlog.KindConf:
		kind = KindConf
	default:
		return Event{}, false
	}
	if e.Term > math.MaxInt || e.Index > math.MaxInt {
		return Event{}, false
	}
	ev := Event{Time: e.Time, Node: e.Node, Kind: kind, Term: int(e.Term), For: e.For, Index: int(e.Index), Line: e.Line}
	if kind == KindConf {
		ev.Voters, ev.Learners, ev.Change = eventlog.Members(e.Voters), eventlog.Members(e.Learners), e.Change
	}
	if kind == KindRole {
		switch e.Role {
		case eventlog.Follower, eventlog.PreCandidate, eventlog.Candidate, eventlog.Leader:
			ev.Role = Role(e.Role)
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
