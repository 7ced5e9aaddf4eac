package foreignlog

import "fmt"

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
}

// Cell is one node's entry in a Row: Text is empty when nothing changed.
type Cell struct {
	Text  string
	State State // the node's state after the row
}

// Timeline returns the rows of the per-node timeline of a report: role
// changes, crashes, restarts and network faults; repeated identical roles
// are left out, and events at the same time share a row when they can.
func Timeline(r Report) []Row {
	nodes := r.Facts.Nodes
	col := map[string]int{}
	for i, n := range nodes {
		col[n] = i
	}
	state := make([]State, len(nodes))
	last := make([]string, len(nodes))
	var rows []Row
	for _, ev := range r.Events {
		i, ok := col[ev.Node]
		if !ok {
			continue
		}
		text, st := cellFor(ev, state[i])
		if text == "" || (ev.Kind == KindRole && text == last[i]) {
			continue
		}
		last[i], state[i] = text, st
		if ev.Kind != KindRole {
			last[i] = ""
		}
		at := int64(ev.Time.Sub(r.Facts.Start))
		if n := len(rows); n > 0 && rows[n-1].At == at && rows[n-1].Cells[i].Text == "" {
			rows[n-1].Cells[i].Text = text
			for j := range state {
				rows[n-1].Cells[j].State = state[j]
			}
			continue
		}
		row := Row{At: at, Line: ev.Line, Cells: make([]Cell, len(nodes))}
		for j := range state {
			row.Cells[j].State = state[j]
		}
		row.Cells[i].Text = text
		rows = append(rows, row)
	}
	return rows
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
