package campaign

import (
	"context"
	"fmt"
	"sync"
	"time"

	"chaos/checker"
	"chaos/history"
	"chaos/nemesis"
	"chaos/workload"
)

// loadPhase runs the clients and the nemesis together until the time
// limit or an interrupt, then heals every fault. It reports whether the run
// was interrupted.
func (r *run) loadPhase(ctx context.Context, l *load, faults []nemesis.Fault) bool {
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	// Faults stop o.Recovery before the load does, so the availability
	// check sees whether the healed cluster serves clients again.
	nemCtx, stopNemesis := context.WithTimeout(context.Background(), r.nemesisTime())
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.runNemesis(nemCtx, faults)
	}()
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		r.showProgress(loadCtx, l.runner)
	}()
	if _, err := l.runner.Run(loadCtx); err != nil {
		r.log.Error("load", "err", err)
		fmt.Fprintf(r.env.Out, "warning: load: %v\n", err)
	}
	stopLoad()
	<-progressDone
	// The schedule heals every fault it started, and everything any family
	// can leave, before it returns.
	stopNemesis()
	wg.Wait()
	for _, c := range l.clients {
		_ = c.Close()
	}
	return ctx.Err() != nil
}

// finalPhase lets the healed cluster recover, then runs the workload's
// final reads.
func (r *run) finalPhase(ctx context.Context, l *load) {
	if l.set == nil {
		return
	}
	if ctx.Err() == nil {
		r.log.Info("recovering", "for", r.o.Recovery)
		select {
		case <-ctx.Done():
		case <-time.After(r.o.Recovery):
		}
	}
	readCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	readers, err := r.cl.clients(len(r.cl.nodes))
	if err != nil {
		r.log.Error("final read clients", "err", err)
		return
	}
	defer func() {
		for _, c := range readers {
			_ = c.Close()
		}
	}()
	if err := workload.FinalSetRead(readCtx, readers, l.set.Attempted(), r.rec); err != nil {
		r.log.Error("final read", "err", err)
	}
}

// check runs every checker on the recorded history and writes
// results.json and report.html.
func (r *run) check(ctx context.Context, unavailable map[string]string, interrupted bool) (Result, error) {
	_ = r.histF.Close()
	h := r.rec.Ops()
	if err := history.Validate(h); err != nil {
		return Result{}, fmt.Errorf("the recorded history is malformed (a bug in chaos): %w", err)
	}
	checkCtx := context.Background()
	if ctx.Err() == nil {
		checkCtx = ctx
	}
	report, err := Check(checkCtx, r.rd.dir, h, CheckOptions{Workload: r.o.Workload,
		CheckerTimeout: r.o.CheckerTimeout, Recovery: r.o.Recovery})
	if err != nil {
		return Result{}, fmt.Errorf("check: %w", err)
	}
	summary := RunSummary{Name: r.o.Name, Seed: r.seed, Started: r.started.UTC().Format(time.RFC3339Nano),
		DurationS: time.Since(r.started).Seconds(), Interrupted: interrupted,
		Nemesis: nemesisSummary(h, unavailable), Clients: r.cl.clientsSummary()}
	if err := r.rd.writeJSON("results.json", summary); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	valid, err := checker.WriteResults(r.rd.path("results.json"), report)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	res := Result{Valid: valid, Report: report, Interrupted: interrupted}
	if err := r.writeLinearizableSummary(res); err != nil {
		return res, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	if err := writeReport(r.rd.path("report.html"), r.reportData(res, h, unavailable)); err != nil {
		return res, fmt.Errorf("%w: report: %v", ErrSetup, err)
	}
	r.summarize(res)
	return res, nil
}

// showProgress displays the load phase until ctx ends.
func (r *run) showProgress(ctx context.Context, runner *workload.Runner) {
	p := newProgress(r.env.Progress, r.env.ProgressIsTerminal, r.o.TimeLimit)
	defer p.finish()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			leader, err := r.cl.leader(ctx)
			if err != nil {
				leader = "none"
			}
			p.update(runner.Stats(), r.activeFaults(), leader)
		}
	}
}

// nemesisSummary is results.json's record of the faults in h.
func nemesisSummary(h history.History, unavailable map[string]string) NemesisSummary {
	ops := []Transition{}
	for _, op := range h.Nemesis() {
		ops = append(ops, Transition{TimeS: float64(op.Time) / 1e9, F: op.F, Value: op.Value})
	}
	return NemesisSummary{Transitions: ops, Unavailable: unavailable}
}

// nemesisTime is how long the schedule runs: the load phase less the
// recovery period, when the load phase is long enough to hold both.
func (r *run) nemesisTime() time.Duration {
	if r.o.TimeLimit > 2*r.o.Recovery {
		return r.o.TimeLimit - r.o.Recovery
	}
	return r.o.TimeLimit
}
