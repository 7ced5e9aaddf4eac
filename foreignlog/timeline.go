package foreignlog

import (
	"fmt"
	"time"
)

// State is what a timeline shows of a node at a row.
type State string

// The states of a timeline cell.
const (
	StateUnknown   State = ""
	StateFollower  State = "follower"
	StateCandidate State = "candidate"
	StateLeader    State = "leader"
	StateDown      State = "down"
)

// Row is one row of a per-node timeline: what changed at At, by node.
type Row struct {
	At    int64 // nanoseconds from the start of the log
	Line  int
	Cells []Cell // one per node, in Facts.Nodes order
	// Members is the configuration the cluster went to in this row (a
	// conf event made it new, see Facts.Membership): "#2 voters=(1 2)";
	// "" when none did.
	Members string
}

// Cell is one node's entry in a Row: Text is empty when nothing changed.
type Cell struct {
	Text  string
	State State // the node's state after the row
}

// Timeline returns the rows of the per-node timeline of a report: role
// changes, crashes, restarts, network faults and the membership
// configurations nodes switch to ("conf #2", numbered as in
// Facts.Membership, whose configuration the row that first shows it
// names in Members); repeated identical roles are left out, and events at
// the same time share a row when they can.
func Timeline(r Report) []Row {
	nodes := r.Facts.Nodes
	col := map[string]int{}
	for i, n := range nodes {
		col[n] = i
	}
	state := make([]State, len(nodes))
	last := make([]string, len(nodes))
	members := newMemberships()
	var rows []Row
	for _, ev := range r.Events {
		i, ok := col[ev.Node]
		if !ok {
			continue
		}
		at := int64(ev.Time.Sub(r.Facts.Start))
		text, st := cellFor(ev, state[i])
		conf := ""
		if ev.Kind == KindConf {
			k, added := members.step(ev, time.Duration(at))
			text = fmt.Sprintf("conf #%d", k+1)
			if added {
				conf = membersText(k, members.list[k])
			}
		}
		if text == "" || (ev.Kind == KindRole && text == last[i]) {
			continue
		}
		last[i], state[i] = text, st
		if ev.Kind != KindRole {
			last[i] = ""
		}
		if n := len(rows); n > 0 && rows[n-1].At == at && rows[n-1].Cells[i].Text == "" && (conf == "" || rows[n-1].Members == "") {
			rows[n-1].Cells[i].Text = text
			rows[n-1].Members += conf
			for j := range state {
				rows[n-1].Cells[j].State = state[j]
			}
			continue
		}
		row := Row{At: at, Line: ev.Line, Cells: make([]Cell, len(nodes)), Members: conf}
		for j := range state {
			row.Cells[j].State = state[j]
		}
		row.Cells[i].Text = text
		rows = append(rows, row)
	}
	return rows
}

// membersText is the Members text of the k-th (from 0) configuration:
// "#3 voters=(n1 n2 n3) learners=(n4), add-learner n4 at index 12".
func membersText(k int, m Membership) string {
	s := fmt.Sprintf("#%d %s", k+1, m)
	if o := m.origin(); o != "" {
		s += ", " + o
	}
	return s
}

// cellFor is the text of an event in the timeline and the node's state
// after it; "" for events the timeline leaves out.
func cellFor(ev Event, prev State) (string, State) {
	switch ev.Kind {
	case KindRole:
		name := map[Role]string{Leader: "LEADER", Candidate: "candidate", PreCandidate: "pre-cand", Follower: "follower"}[ev.Role]
		if ev.Role == PreCandidate {
			return fmt.Sprintf("%s t%d", name, ev.Term), StateCandidate
		}
		return fmt.Sprintf("%s t%d", name, ev.Term), State(ev.Role)
	case KindCrash:
		return "CRASH", StateDown
	case KindStop:
		return "stop", StateDown
	case KindStart:
		return "start", StateFollower
	case KindDisconnect:
		return "disconnected", prev
	case KindReconnect:
		return "reconnected", prev
	}
	return "", prev
}
