package raftcheck

import (
	"errors"
	"io/fs"

	"chaos/checker"
	"chaos/history"
	"chaos/node/eventlog"
)

// CheckRun runs the raft and availability checkers on a run directory: the
// nodes' event logs under runDir/nodes and the run's history. A run without
// event logs (a system that writes none, such as etcd) gets only the
// availability check, from the history alone. Event logs that cannot be
// read make the raft check unknown, with the reason, never valid; the
// availability check then judges from the history alone.
func CheckRun(runDir string, h history.History, opts AvailabilityOptions) map[string]checker.Result {
	events, skipped, err := eventlog.LoadRun(runDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return map[string]checker.Result{"availability": Availability(nil, h, opts)}
	case err != nil:
		d := &RaftDetails{Nodes: []string{}, Leaders: map[uint64]string{}, Counts: map[string]int{},
			Violations: []Violation{}, Reason: "the event logs cannot be read: " + err.Error()}
		return map[string]checker.Result{"raft": {Valid: checker.Unknown, Details: d},
			"availability": Availability(nil, h, opts)}
	}
	raft := Raft(events)
	raft.Details.(*RaftDetails).Skipped = skipped
	return map[string]checker.Result{"raft": raft, "availability": Availability(events, h, opts)}
}
