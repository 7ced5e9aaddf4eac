package raftcheck

import (
	"time"

	"chaos/eventlog"
	"chaos/history"
	"chaos/node/kv"
)

// loadStart estimates when, on the nodes' clocks, the load began: the
// history's time 0. The history's clock is the controller's, the event
// logs' are the nodes', and no record ties them, so the writes do: the
// first client command any node applied was applied after the load
// began, and the first write that completed ok was applied before it
// completed. So the load began at or after (first apply) - (first ok
// write's completion time), and that is the estimate: early by the time
// from the first apply to the first ok reply, a few milliseconds while
// the cluster serves. ok is false when the history has no ok write, cas
// or add, or the events no applied client command.
func loadStart(events []eventlog.Event, h history.History) (time.Time, bool) {
	noop := kv.Hash(nil) // the empty entry a new leader appends, which no client asked for
	var firstApply time.Time
	for _, e := range events {
		if e.Event == eventlog.KindApply && e.Hash != noop && (firstApply.IsZero() || e.Time.Before(firstApply)) {
			firstApply = e.Time
		}
	}
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
