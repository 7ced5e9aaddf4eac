package campaign

import (
	"context"
	"fmt"
	"io"
)

// RunFunc performs run i (from 0) of test t and returns it. It reports a
// run that could not reach a verdict as Crashed, never as an error.
type RunFunc func(ctx context.Context, t Test, i int) Run

// Runner runs tests one run at a time, in order.
type Runner struct {
	Run RunFunc
	// Out receives a line per run as it ends.
	Out io.Writer
	// StopAtInvalid ends a test at its first invalid run (chaos run
	// --test-count without --keep-going); its other runs do not happen.
	StopAtInvalid bool
}

// Execute runs every count of every test and judges each test. When ctx
// ends (an interrupt), the run in flight finishes as Run returns it and is
// kept, its test and the tests not begun are Skipped with the reason, and
// interrupted is true.
func (r Runner) Execute(ctx context.Context, tests []Test) (results []TestResult, interrupted bool) {
	for _, t := range tests {
		if ctx.Err() != nil {
			results = append(results, skipped(t, "the campaign was interrupted before this test"))
			continue
		}
		results = append(results, r.test(ctx, t))
	}
	return results, ctx.Err() != nil
}

// test runs one test's counts.
func (r Runner) test(ctx context.Context, t Test) TestResult {
	var runs []Run
	for i := range t.Count {
		if ctx.Err() != nil {
			break
		}
		run := r.Run(ctx, t, i)
		runs = append(runs, run)
		fmt.Fprintf(r.Out, "%s run %d/%d: %s\n", t.Name, i+1, t.Count, run.line())
		if r.StopAtInvalid && run.Verdict == Invalid {
			break
		}
	}
	res := Judged(t, runs)
	if ctx.Err() != nil {
		res.Skipped = fmt.Sprintf("interrupted after %d of %d runs; the last was cut short, so the test is not judged", len(runs), t.Count)
	}
	return res
}

// Judged is test t's result over runs.
func Judged(t Test, runs []Run) TestResult {
	res := TestResult{Name: t.Name, Expect: t.Expect, Count: t.Count, Runs: runs, Stats: Summarize(runs)}
	res.Outcome = Judge(t.Expect, res.Stats)
	res.Replay = replayOf(t.Expect, runs)
	return res
}

// replayOf is the replay command of the first run that went against
// expect (crashed, or invalid for an expected valid test, or the first
// that was not invalid for an expected invalid one), else of the first.
func replayOf(expect string, runs []Run) string {
	for _, r := range runs {
		missed := r.Verdict == Crashed || r.Verdict == Unknown ||
			(expect == ExpectValid && r.Verdict == Invalid) || (expect == ExpectInvalid && r.Verdict != Invalid)
		if missed {
			return r.Replay
		}
	}
	if len(runs) > 0 {
		return runs[0].Replay
	}
	return ""
}

func skipped(t Test, why string) TestResult {
	return TestResult{Name: t.Name, Expect: t.Expect, Count: t.Count, Runs: []Run{},
		Stats: Summarize(nil), Outcome: Undecided, Skipped: why}
}

// line is a run in one line: verdict, seed, time, throughput, directory.
func (r Run) line() string {
	s := fmt.Sprintf("%s, seed %d, %.1f s, %.0f ops/s", r.Verdict, r.Seed, r.DurationS, r.OpsPerS)
	if r.FirstAnomalyS != nil {
		s += fmt.Sprintf(", first anomaly at %.1f s", *r.FirstAnomalyS)
	}
	if r.Dir != "" {
		s += ", " + r.Dir
	}
	if r.Verdict == Crashed {
		s += ": " + r.Summary
	}
	return s
}
