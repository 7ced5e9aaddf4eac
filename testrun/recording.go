package testrun

import (
	"fmt"
	"path/filepath"

	"chaos/history"
	"chaos/internal/inputfile"
)

// recording is what a run keeps of its history while it is recorded: the
// recorder hands it every op (history.RecorderOptions.Sink) and keeps
// none, so that a long run's history is held nowhere, only what each
// check keeps of it (see checker.Checks) and what the run's summary needs.
// Its fields are written under the recorder's lock and read once the
// recorder is closed.
type recording struct {
	checks  *checking
	err     error           // the checks' first error: they are then over
	last    int64           // the time of the last op
	nemesis history.History // the nemesis ops, for results.json's summary
}

// take is the recorder's sink.
func (r *recording) take(op *history.Op) {
	if r.err == nil {
		r.err = r.checks.add(op)
	}
	r.last = op.Time
	if op.Process.IsNemesis() {
		r.nemesis = append(r.nemesis, *op)
	}
}

// scanFile is the scan of the history.jsonl at path, for what the summary
// reads of the ops again once checked (firstAnomalyIn); a file that
// cannot be read gives the ops read before.
func scanFile(path string) opScan {
	return func(fn func(*history.Op) error) error {
		f, err := inputfile.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := history.Scan(f, fn); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		return nil
	}
}

// checkOptions are the options a run's history is checked with.
func (r *run) checkOptions() CheckOptions {
	return CheckOptions{Workload: r.o.Workload, CheckerTimeout: r.o.CheckerTimeout, Checker: r.o.Checker,
		Recovery: r.o.Recovery, RecoveryAdvisory: r.o.recoveryAdvisory}
}
