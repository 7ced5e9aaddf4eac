package foreignlog

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Membership is one configuration of the cluster over time: the voters and
// learners some node switched to, with every node that switched to it.
type Membership struct {
	// At is when the first node switched to it, from Facts.Start.
	At time.Duration `json:"at_ns"`
	// Index is the log index that made it (chaos-node: the membership
	// entry's, or the snapshot's it was restored from); 0 when the log
	// does not say, and for the members a cluster starts with.
	Index    int      `json:"index,omitempty"`
	Change   string   `json:"change,omitempty"` // the change that made it, when the log says
	Voters   []string `json:"voters"`
	Learners []string `json:"learners,omitempty"`
	// Nodes are the nodes that switched to it, in the order they first did.
	Nodes []string `json:"nodes"`
	Line  int      `json:"line"` // of the first node's conf event
}

// String writes the members as etcd does: "voters=(1 2 3) learners=(4)".
func (m Membership) String() string {
	s := "voters=(" + strings.Join(m.Voters, " ") + ")"
	if len(m.Learners) > 0 {
		s += " learners=(" + strings.Join(m.Learners, " ") + ")"
	}
	return s
}

// origin says what made the configuration, "" when the log does not say:
// "add-learner n4 at index 12", "index 40" (a snapshot's).
func (m Membership) origin() string {
	switch {
	case m.Change != "" && m.Index > 0:
		return fmt.Sprintf("%s at index %d", m.Change, m.Index)
	case m.Change != "":
		return m.Change
	case m.Index > 0:
		return fmt.Sprintf("index %d", m.Index)
	}
	return ""
}

// sameMembers reports whether a conf event has m's voters and learners.
func (m Membership) sameMembers(ev Event) bool {
	return slices.Equal(m.Voters, ev.Voters) && slices.Equal(m.Learners, ev.Learners)
}

// memberships follows the configurations of a log, event by event, into
// one list for the cluster: a node that switches to a configuration
// another node switched to before joins that one, so the list holds each
// configuration once per time the cluster went through it. Which one a
// conf event joins, when its members match:
//
//   - an event of a membership change at a log index (chaos-node) joins
//     the configuration made at that index;
//   - a configuration as of a snapshot (an index, no change) joins the one
//     in force at that index: the latest made at or before it;
//   - an event without an index (etcd, or the members a chaos-node
//     cluster starts with) joins the first configuration without one
//     after the one the node is in, or else the first anywhere (a node
//     that replays its log from the start, as etcd's do when they
//     restart).
//
// Otherwise the event adds a configuration to the list.
type memberships struct {
	list []Membership
	at   map[string]int // node -> position in list of its configuration
}

func newMemberships() *memberships { return &memberships{at: map[string]int{}} }

// step takes a conf event at offset at; it returns the position in the
// list of the configuration the node switched to, and whether the event
// added it.
func (m *memberships) step(ev Event, at time.Duration) (int, bool) {
	i := m.find(ev)
	added := i < 0
	if added {
		i = len(m.list)
		m.list = append(m.list, Membership{At: at, Index: ev.Index, Change: ev.Change,
			Voters: slices.Clone(ev.Voters), Learners: slices.Clone(ev.Learners), Line: ev.Line})
	}
	if !slices.Contains(m.list[i].Nodes, ev.Node) {
		m.list[i].Nodes = append(m.list[i].Nodes, ev.Node)
	}
	m.at[ev.Node] = i
	return i, added
}

// find returns the position of the configuration ev joins, or -1 (see
// memberships).
func (m *memberships) find(ev Event) int {
	switch {
	case ev.Index > 0 && ev.Change != "":
		return slices.IndexFunc(m.list, func(c Membership) bool { return c.Index == ev.Index && c.sameMembers(ev) })
	case ev.Index > 0:
		best := -1
		for i, c := range m.list {
			if c.Index <= ev.Index && (best < 0 || c.Index >= m.list[best].Index) {
				best = i
			}
		}
		if best >= 0 && m.list[best].sameMembers(ev) {
			return best
		}
		return -1
	}
	unindexed := func(c Membership) bool { return c.Index == 0 && c.sameMembers(ev) }
	if cur, ok := m.at[ev.Node]; ok {
		if j := slices.IndexFunc(m.list[cur+1:], unindexed); j >= 0 {
			return cur + 1 + j
		}
	}
	return slices.IndexFunc(m.list, unindexed)
}
