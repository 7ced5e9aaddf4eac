package raftcheck

import (
	"slices"

	"chaos/history"
)

// Timeline is what the availability check reads of a history: its first
// and last ops, its nemesis ops, its first successful write (which places
// the load on the nodes' clocks, see loadStart) and the completion times of
// the client ops that succeeded. Ops are added one at a time, in order, so
// a long history need not be held whole; the zero value is empty.
type Timeline struct {
	ops      history.History // first op, nemesis ops, first ok write, in order
	last     history.Op      // the last op added
	lastKept bool            // whether last is ops' last element
	wrote    bool            // whether the first ok write is in ops
	oks      []int64
}

// TimelineOf returns the timeline of h.
func TimelineOf(h history.History) *Timeline {
	t := &Timeline{}
	for i := range h {
		t.Add(&h[i])
	}
	return t
}

// Add takes the next op of the history.
func (t *Timeline) Add(op *history.Op) {
	keep := len(t.ops) == 0 || op.Process.IsNemesis()
	if !op.Process.IsNemesis() && op.Type == history.OK {
		t.oks = append(t.oks, op.Time)
		if !t.wrote && isWrite(op.F) {
			keep, t.wrote = true, true
		}
	}
	if keep {
		t.ops = append(t.ops, *op)
	}
	t.last, t.lastKept = *op, keep
}

// isWrite reports whether f changes the store (see loadStart).
func isWrite(f string) bool {
	switch f {
	case history.FWrite, history.FCAS, history.FAdd:
		return true
	}
	return false
}

// history returns the ops the checks read, the last op included; an
// empty timeline gives an empty history.
func (t *Timeline) history() history.History {
	if len(t.ops) == 0 || t.lastKept {
		return t.ops
	}
	return append(slices.Clip(t.ops), t.last)
}

// okTimes returns the completion times of client ops that ended ok,
// sorted.
func (t *Timeline) okTimes() []int64 {
	slices.Sort(t.oks)
	return t.oks
}
