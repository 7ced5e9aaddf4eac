package testrun

import (
	"context"
	"path/filepath"
	"time"

	"chaos/checker"
	"chaos/history"
	"chaos/internal/inputfile"
	"chaos/raftcheck"
	"chaos/testrun/runrecord"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// Workload is the workload the history comes from, or "" to detect it.
	Workload string
	// CheckerTimeout bounds the linearizability search (0: no bound).
	CheckerTimeout time.Duration
	// Checker is the linearizability algorithm (checker.AlgorithmAuto or
	// checker.AlgorithmSearch; empty: auto).
	Checker string
	// ConsistencyModel is the list-append check's model (empty:
	// checker.DefaultConsistencyModel).
	ConsistencyModel string
	// Recovery bounds the cluster's recovery after the final heal for the
	// availability check; 0 takes the run's test.json, and without one the
	// checker's default.
	Recovery time.Duration
	// RecoveryAdvisory makes Recovery a bound the availability check
	// reports against but does not fail on (see
	// raftcheck.AvailabilityOptions). With Recovery zero, a run
	// directory's test.json says both.
	RecoveryAdvisory bool
	// Observe, if set, is handed every op CheckFile reads, in order, after
	// the checks took it (Check ignores it): another reader of the history,
	// such as the report (runreport.Digest), needs no second pass over the
	// file. The op is Observe's only during the call, as history.Scan's fn.
	Observe func(*history.Op)
}

// Check runs every checker on h, the history of the run in dir (a run
// directory, or the directory of a bare history.jsonl): the client
// checks of the workload (linearizability or the set, and stats) and the
// checks of the nodes' event logs (raft, availability). Visualizations of
// keys that are not linearizable go into dir/linearizable. Its checks are
// the one way a run is checked: `chaos run` feeds them each op as it is
// recorded (see recording), `chaos check` as it reads the file
// (CheckFile). Errors are about the input (wrapping checker.ErrMalformed)
// or about writing the visualizations.
func Check(ctx context.Context, dir string, h history.History, o CheckOptions) (checker.Report, error) {
	c := newChecking(dir, o)
	for i := range h {
		if err := c.add(&h[i]); err != nil {
			return checker.Report{}, err
		}
	}
	return c.report(ctx, dir)
}

// CheckFile is Check on the history.jsonl at path, which it reads once,
// op by op, checking as it reads: only what each check keeps of an op is
// held (see checker.Checks), never the whole history. The warnings are
// history.Parse's; a problem with the file is a *history.ParseError, a
// path that is not a regular file inputfile.ErrNotRegular.
func CheckFile(ctx context.Context, path string, o CheckOptions) (checker.Report, []history.Warning, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return checker.Report{}, nil, err
	}
	defer f.Close()
	dir := filepath.Dir(path)
	c := newChecking(dir, o)
	c.events = raftcheck.ReadRun(dir) // on another core while the history is read
	add := c.add
	if o.Observe != nil {
		add = func(op *history.Op) error {
			if err := c.add(op); err != nil {
				return err
			}
			o.Observe(op)
			return nil
		}
	}
	warnings, err := history.Scan(f, add)
	if err != nil {
		return checker.Report{}, warnings, err
	}
	report, err := c.report(ctx, dir)
	return report, warnings, err
}

// checking is one check of a history whose ops arrive in order.
type checking struct {
	o        CheckOptions
	checks   *checker.Checks
	timeline raftcheck.Timeline
	// events are the run's event logs being read: from the start of
	// CheckFile, or of the report (a run's logs are pulled at its end).
	events *raftcheck.Reading
}

// newChecking starts a check of the history of the run in dir.
func newChecking(dir string, o CheckOptions) *checking {
	return &checking{o: o, checks: checker.NewChecks(checker.Options{Workload: o.Workload, ConsistencyModel: o.ConsistencyModel,
		Linearizable: checker.LinearizableOptions{Timeout: o.CheckerTimeout, Algorithm: o.Checker,
			VisualizationDir: filepath.Join(dir, "linearizable")}})}
}

func (c *checking) add(op *history.Op) error {
	c.timeline.Add(op)
	return c.checks.Add(op)
}

// report runs what needs the whole history and merges every verdict.
func (c *checking) report(ctx context.Context, dir string) (checker.Report, error) {
	if c.events == nil {
		c.events = raftcheck.ReadRun(dir) // while the client checks finish
	}
	report, err := c.checks.Report(ctx)
	if err != nil {
		return checker.Report{}, err
	}
	recovery, advisory := c.o.Recovery, c.o.RecoveryAdvisory
	if recovery == 0 {
		if t, err := runrecord.ReadTestRecord(dir); err == nil {
			recovery, advisory = t.Recovery(), t.RecoveryAdvisory
		}
	}
	avail := raftcheck.AvailabilityOptions{RecoveryBound: recovery, RecoveryAdvisory: advisory}
	for name, res := range c.events.Check(&c.timeline, avail) {
		report.Checks[name] = res
	}
	verdicts := make([]checker.Validity, 0, len(report.Checks))
	for _, r := range report.Checks {
		verdicts = append(verdicts, r.Valid)
	}
	report.Valid = checker.Merge(verdicts...)
	return report, nil
}
