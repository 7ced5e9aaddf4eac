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
	return ReadRun(runDir).Check(t, opts)
}

// Reading is a run directory's event logs being read for CheckRun's
// checks, in a goroutine of its own: a caller with other work to do
// meanwhile (reading the history) starts it first, and both go on at
// once. A Reading never checked ends when its reading does.
type Reading struct {
	done chan struct{}
	r    *runEvents
	err  error
}

// ReadRun starts reading the event logs of runDir.
func ReadRun(runDir string) *Reading {
	rd := &Reading{done: make(chan struct{})}
	go func() {
		defer close(rd.done)
		rd.r, rd.err = readEvents(runFiles(runDir))
	}()
	return rd
}

// Check waits for the reading to end and runs CheckRun's checks on what
// it read, with the timeline t of the run's history.
func (rd *Reading) Check(t *Timeline, opts AvailabilityOptions) map[string]checker.Result {
	<-rd.done
	switch {
	case errors.Is(rd.err, fs.ErrNotExist):
		return map[string]checker.Result{"availability": TimelineAvailability(nil, t, opts)}
	case rd.err != nil:
		d := &RaftDetails{Nodes: []string{}, Leaders: map[uint64]string{}, Counts: map[string]int{},
			Violations: []Violation{}, Reason: "the event logs cannot be read: " + rd.err.Error()}
		return map[string]checker.Result{"raft": {Valid: checker.Unknown, Details: d},
			"availability": TimelineAvailability(nil, t, opts)}
	}
	f := analyze(rd.r.events)
	return map[string]checker.Result{"raft": rd.r.raft(f), "availability": rd.r.availability(f, t, opts)}
}
