package raftcheck

import (
	"errors"
	"io/fs"

	"chaos/checker"
)

// CheckRun runs the raft and availability checkers on a run directory: the
// nodes' event logs under runDir/nodes and the timeline of the run's
// history. It reads the event logs once, each node's after the other, and
// keeps only what the rules need of them (see read.go): its memory grows
// with the logs' elections, restarts and snapshots, and 16 bytes a log
// index, not with their lines. A run without event logs (a system that
// writes none, such as etcd) gets only the availability check, from the
// history alone. Event logs that cannot be read make the raft check
// unknown, with the reason, never valid; the availability check then
// judges from the history alone.
func CheckRun(runDir string, t *Timeline, opts AvailabilityOptions) map[string]checker.Result {
	r, err := readEvents(runFiles(runDir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return map[string]checker.Result{"availability": TimelineAvailability(nil, t, opts)}
	case err != nil:
		d := &RaftDetails{Nodes: []string{}, Leaders: map[uint64]string{}, Counts: map[string]int{},
			Violations: []Violation{}, Reason: "the event logs cannot be read: " + err.Error()}
		return map[string]checker.Result{"raft": {Valid: checker.Unknown, Details: d},
			"availability": TimelineAvailability(nil, t, opts)}
	}
	f := analyze(r.events)
	return map[string]checker.Result{"raft": r.raft(f), "availability": r.availability(f, t, opts)}
}
