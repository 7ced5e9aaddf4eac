package raftcheck

import (
	"time"

	"chaos/history"
)

// loadStart estimates when, on the nodes' clocks, the load began: the
// history's time 0. The history's clock is the controller's, the event
// logs' are the nodes', and no record ties them, so the writes do: the
// first client command any node applied was applied after the load
// began, and the first write that completed ok was applied before it
// completed. So the load began at or after (first apply) - (first ok
// write's completion time), and that is the estimate: early by the time
// from the first apply to the first ok reply, a few milliseconds while
// the cluster serves. firstApply is the earliest apply of a client command
// (not the empty entry a new leader appends), zero for none
// (runEvents.clientApply). ok is false when the history has no ok write,
// cas or add, or the events no applied client command.
func loadStart(firstApply time.Time, h history.History) (time.Time, bool) {
	if firstApply.IsZero() {
		return time.Time{}, false
	}
	for _, op := range h {
		if op.Process.IsNemesis() || op.Type != history.OK {
			continue
		}
		switch op.F {
		case history.FWrite, history.FCAS, history.FAdd:
			return firstApply.Add(-time.Duration(op.Time)), true
		}
	}
	return time.Time{}, false
}
