package raftcheck

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"chaos/eventlog"
)

// The membership configurations of a run, from the nodes' conf events
// (docs/FORMATS.md, events.jsonl). A conf event says which configuration
// the node's state machine holds as of a log index: the one a membership
// entry made (its index), the one a snapshot holds (the snapshot's index),
// or the members a cluster starts with (index 0). These are committed
// configurations, applied in log order; Raft itself uses a configuration
// from the moment its entry is appended, which the checks allow for.
//
// What a node's events show exactly: in one life (a node's file is always
// a prefix of what the life wrote, events in the order they happened),
// from a conf event at index lo until the next one, the node applied every
// entry from lo on without a membership change, so the configuration it
// names holds at every index up to the last entry applied before the next
// conf event (or up to that event's index less one, for a change: the
// entries in between were applied without one). A restore, a start or the
// end of the life ends such a stretch. Older event logs have no conf
// events: then nothing here applies and the checks are as before.

// MaxConfigurations bounds the configurations [MembershipDetails] lists.
const MaxConfigurations = 1000

// Configuration is a membership configuration as of a log index, as the
// nodes applied it.
type Configuration struct {
	Index uint64 `json:"index"`
	Term  uint64 `json:"term"` // of the entry that made it, or of the snapshot's last entry
	// Change is the membership change that made it ("add-learner n4");
	// "" for a node's starting configuration (the initial members at
	// index 0, or a snapshot's).
	Change   string    `json:"change,omitempty"`
	Voters   []string  `json:"voters"`
	Learners []string  `json:"learners,omitempty"`
	Node     string    `json:"node"` // the node whose conf event this is: the first, in time, of those at this index
	Time     time.Time `json:"time"`
	Line     int       `json:"line"` // in that node's events.jsonl
}

// configurationOf reads a conf event.
func configurationOf(e eventlog.Event) Configuration {
	return Configuration{Index: e.Index, Term: e.Term, Change: e.Change, Voters: eventlog.Members(e.Voters),
		Learners: eventlog.Members(e.Learners), Node: e.Node, Time: e.Time, Line: e.Line}
}

// sameMembers reports whether c and o have the same voters and learners.
func (c Configuration) sameMembers(o Configuration) bool {
	return slices.Equal(c.Voters, o.Voters) && slices.Equal(c.Learners, o.Learners)
}

func (c Configuration) isVoter(node string) bool { return slices.Contains(c.Voters, node) }

// String names the members: "voters n1,n2,n3 learners n4 (index 12)".
func (c Configuration) String() string {
	s := "voters " + strings.Join(c.Voters, ",")
	if len(c.Learners) > 0 {
		s += " learners " + strings.Join(c.Learners, ",")
	}
	return s + fmt.Sprintf(" (index %d)", c.Index)
}

// known is a stretch of log indexes, [lo, hi], over which one node's
// events show its configuration exactly (see the top of this file).
type known struct {
	lo, hi uint64
	conf   Configuration
}

// membership is what the conf events of a run say: each index's first
// conf event, every node's known stretches, and the change indexes in
// order.
type membership struct {
	byIndex map[uint64]Configuration // first conf event (in slice order) at each index
	known   []known
	changes []uint64 // indexes of membership changes, ascending
}

// newMembership reads the conf events of a run: events as Raft takes them,
// byNode the same grouped by node in file order. It returns nil when there
// are none.
func newMembership(events []eventlog.Event, byNode map[string][]eventlog.Event) *membership {
	m := &membership{byIndex: map[uint64]Configuration{}}
	for _, e := range events {
		if e.Event != eventlog.KindConf {
			continue
		}
		if _, ok := m.byIndex[e.Index]; !ok {
			m.byIndex[e.Index] = configurationOf(e)
			if e.Change != "" {
				m.changes = append(m.changes, e.Index)
			}
		}
	}
	if len(m.byIndex) == 0 {
		return nil
	}
	slices.Sort(m.changes)
	for _, node := range sortedKeys(byNode) {
		m.known = append(m.known, knownStretches(byNode[node])...)
	}
	return m
}

// knownStretches returns the stretches one node's events (file order)
// show exactly.
func knownStretches(evs []eventlog.Event) []known {
	var (
		out     []known
		cur     *known
		applied uint64 // the highest index applied, or made by a conf event, in the open stretch
	)
	closeAt := func(hi uint64) {
		if cur != nil {
			cur.hi = max(cur.lo, hi)
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, e := range evs {
		switch e.Event {
		case eventlog.KindStart, eventlog.KindRestore:
			closeAt(applied)
		case eventlog.KindApply:
			applied = max(applied, e.Index)
		case eventlog.KindConf:
			if cur != nil && e.Change != "" && e.Index > cur.lo {
				closeAt(e.Index - 1)
			} else {
				closeAt(applied)
			}
			cur, applied = &known{lo: e.Index, conf: configurationOf(e)}, e.Index
		}
	}
	closeAt(applied)
	return out
}

// at returns the configuration as of index x, when some node's events show
// it exactly and all that do agree on its members; of those that do, the
// one made by the entry (or snapshot) of the lowest term.
func (m *membership) at(x uint64) (Configuration, bool) {
	var found *Configuration
	for i := range m.known {
		k := &m.known[i]
		if x < k.lo || x > k.hi {
			continue
		}
		switch {
		case found == nil:
			found = &k.conf
		case !found.sameMembers(k.conf):
			return Configuration{}, false
		case k.conf.Term < found.Term:
			found = &k.conf
		}
	}
	if found == nil {
		return Configuration{}, false
	}
	return *found, true
}

// next returns the configuration the first membership change after index
// x made, if any node applied one.
func (m *membership) next(x uint64) (Configuration, bool) {
	i, _ := slices.BinarySearch(m.changes, x+1)
	if i == len(m.changes) {
		return Configuration{}, false
	}
	return m.byIndex[m.changes[i]], true
}

// disagreements reports every conf event whose members differ from those
// of the first conf event at its index (by time): two nodes that applied
// different configurations at one index, the membership's State Machine
// Safety. Index 0 is left out: it is each node's starting point, from its
// flags, not a log entry.
func disagreements(events []eventlog.Event) []Violation {
	var out []Violation
	first := map[uint64]eventlog.Event{}
	for _, e := range events {
		if e.Event != eventlog.KindConf || e.Index == 0 {
			continue
		}
		f, ok := first[e.Index]
		if !ok {
			first[e.Index] = e
			continue
		}
		if a, b := configurationOf(f), configurationOf(e); !a.sameMembers(b) {
			out = append(out, violation(KindConfDisagreement, e,
				"%s applied configuration %s; %s applied %s (its line %d)", e.Node, b, f.Node, a, f.Line))
		}
	}
	return out
}

// history returns the configurations the cluster went through, by index:
// the first at each index whose members differ from those before it (so
// a snapshot's configuration is listed only when no earlier one shows
// it), at most MaxConfigurations, and how many more there were.
func (m *membership) history() ([]Configuration, int) {
	all := make([]Configuration, 0, len(m.byIndex))
	for _, c := range m.byIndex {
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b Configuration) int { return cmp.Compare(a.Index, b.Index) })
	out := []Configuration{}
	omitted := 0
	for i, c := range all {
		switch {
		case i > 0 && all[i-1].sameMembers(c):
		case len(out) == MaxConfigurations:
			omitted++
		default:
			out = append(out, c)
		}
	}
	return out, omitted
}

// placedConf is a configuration's voters and the earliest time (node
// clocks) any node applied it.
type placedConf struct {
	at     time.Time
	voters []string
}

// placedConfigurations returns the configurations of events in index
// order, each at the earliest time a node applied it, one after another
// with the same voters merged into the first; none without conf events.
func placedConfigurations(events []eventlog.Event) []placedConf {
	byIndex := map[uint64]placedConf{}
	for _, e := range events {
		if e.Event != eventlog.KindConf {
			continue
		}
		if p, ok := byIndex[e.Index]; !ok || e.Time.Before(p.at) {
			byIndex[e.Index] = placedConf{at: e.Time, voters: eventlog.Members(e.Voters)}
		}
	}
	var out []placedConf
	for _, i := range slices.Sorted(maps.Keys(byIndex)) {
		p := byIndex[i]
		if n := len(out); n > 0 && slices.Equal(out[n-1].voters, p.voters) {
			out[n-1].at = minTime(out[n-1].at, p.at)
			continue
		}
		out = append(out, p)
	}
	return out
}
