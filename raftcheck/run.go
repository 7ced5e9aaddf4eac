package raftcheck

import (
	"errors"
	"io/fs"

	"chaos/checker"
	"chaos/history"
)

// CheckRun runs the raft and availability checkers on a run directory: the
// nodes' event logs under runDir/nodes and the run's history. A run without
// event logs (a system that writes none, such as etcd) gets only the
// availability check, from the history alone.
func CheckRun(runDir string, h history.History, opts AvailabilityOptions) (map[string]checker.Result, error) {
	events, err := LoadRunEvents(runDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return map[string]checker.Result{"availability": Availability(nil, h, opts)}, nil
	case err != nil:
		return nil, err
	}
	return map[string]checker.Result{"raft": Raft(events), "availability": Availability(events, h, opts)}, nil
}
