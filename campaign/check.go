package campaign

import (
	"context"
	"path/filepath"
	"time"

	"chaos/checker"
	"chaos/history"
	"chaos/raftcheck"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// Workload is the workload the history comes from, or "" to detect it.
	Workload string
	// CheckerTimeout bounds the linearizability search (0: no bound).
	CheckerTimeout time.Duration
	// Recovery bounds the cluster's recovery after the final heal for the
	// availability check; 0 takes the run's test.json, and without one the
	// checker's default.
	Recovery time.Duration
}

// Check runs every checker on h, the history of the run in dir (a run
// directory, or the directory of a bare history.jsonl): the client
// checks of the workload (linearizability or the set, and stats) and the
// checks of the nodes' event logs (raft, availability). Visualizations of
// keys that are not linearizable go into dir/linearizable. It is the one
// way a run is checked, by `chaos run` and by `chaos check` alike. Errors
// are about the input (wrapping checker.ErrMalformed) or about writing the
// visualizations.
func Check(ctx context.Context, dir string, h history.History, o CheckOptions) (checker.Report, error) {
	report, err := checker.CheckAll(ctx, h, checker.Options{Workload: o.Workload,
		Linearizable: checker.LinearizableOptions{Timeout: o.CheckerTimeout, VisualizationDir: filepath.Join(dir, "linearizable")}})
	if err != nil {
		return checker.Report{}, err
	}
	recovery := o.Recovery
	if recovery == 0 {
		if t, err := ReadTestRecord(dir); err == nil {
			recovery = t.Recovery()
		}
	}
	for name, res := range raftcheck.CheckRun(dir, h, raftcheck.AvailabilityOptions{RecoveryBound: recovery}) {
		report.Checks[name] = res
	}
	verdicts := make([]checker.Validity, 0, len(report.Checks))
	for _, c := range report.Checks {
		verdicts = append(verdicts, c.Valid)
	}
	report.Valid = checker.Merge(verdicts...)
	return report, nil
}
