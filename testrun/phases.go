package testrun

import (
	"context"
	"fmt"
	"sync"
	"time"

	"chaos/checker"
	"chaos/cluster"
	"chaos/control"
	"chaos/history"
	"chaos/history/faultrec"
	"chaos/nemesis"
	"chaos/testrun/runrecord"
	"chaos/workload"
)

// loadPhase runs the clients and the nemesis together, heals every fault,
// and reports whether the run was interrupted. The load ends by the rule
// of window.go: at the time limit, or later when the final heal ended so
// late that less than Recovery of load would follow it.
func (r *run) loadPhase(ctx context.Context, l *load, faults []nemesis.Fault) bool {
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	// The schedule ends by its own deadline (nemesisTime), or when the load
	// ends first (an interrupt).
	nemCtx, stopNemesis := context.WithCancel(context.Background())
	defer stopNemesis()
	healed := make(chan time.Duration, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(healed)
		if end, ok := r.runNemesis(nemCtx, faults); ok {
			healed <- end
		}
	})
	wg.Go(func() { r.endLoad(loadCtx, healed, l.stop) })
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
	readers, err := r.cl.Clients(len(r.cl.Nodes))
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

// check finishes the checks the history was fed to as it was recorded
// (see recording) and writes results.json and report.html.
func (r *run) check(ctx context.Context, unavailable map[string]string, interrupted bool) (Result, error) {
	_ = r.histF.Close()
	if err := r.recorded.err; err != nil {
		return Result{}, fmt.Errorf("check: %w", err)
	}
	checkCtx := context.Background()
	if ctx.Err() == nil {
		checkCtx = ctx
	}
	report, err := r.recorded.checks.report(checkCtx, r.rd.dir)
	r.recorded.checks = nil // what the checks kept of every op: free for the report to reuse
	if err != nil {
		return Result{}, fmt.Errorf("check: %w", err)
	}
	first := firstAnomalyIn(report, scanFile(r.rd.path("history.jsonl")), r.start)
	rate := okRate(report, r.recorded.last)
	summary := runrecord.RunSummary{Name: r.o.Name, Seed: r.seed, Started: r.started.UTC().Format(time.RFC3339Nano),
		LoadStarted: r.start.UTC().Format(time.RFC3339Nano), DurationS: time.Since(r.started).Seconds(),
		Interrupted: interrupted, FirstAnomalyS: first, OpsPerS: rate,
		Nemesis: nemesisSummary(r.recorded.nemesis, unavailable), Leaders: r.leaders.list(), Clients: clientsSummary(r.cl.Made()),
		Hosts: hostAccess(r.cl)}
	if err := r.rd.writeJSON("results.json", summary); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	valid, err := checker.WriteResults(r.rd.path("results.json"), report)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	res := Result{Valid: valid, Report: report, Interrupted: interrupted, FirstAnomalyS: first, OpsPerS: rate,
		Faults: summary.Nemesis.Counts}
	if err := r.writeLinearizableSummary(res); err != nil {
		return res, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	if r.env.Report != nil {
		if err := r.env.Report(r.rd.dir); err != nil {
			return res, fmt.Errorf("%w: report: %v", ErrSetup, err)
		}
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
			p.update(runner.Stats(), r.activeFaults(), r.observeLeader(ctx))
		}
	}
}

// nemesisSummary is results.json's record of the faults in h.
func nemesisSummary(h history.History, unavailable map[string]string) runrecord.NemesisSummary {
	ops := []runrecord.Transition{}
	var counts faultrec.Tally
	for _, op := range h.Nemesis() {
		ops = append(ops, runrecord.Transition{TimeS: float64(op.Time) / 1e9, F: op.F, Value: op.Value})
		counts.Add(op.F, op.Value)
	}
	return runrecord.NemesisSummary{Transitions: ops, Counts: counts, Unavailable: unavailable}
}

// hostAccess is results.json's "hosts": how each node's host was reached;
// nil in local mode.
func hostAccess(c *cluster.Cluster) map[string]runrecord.HostAccess {
	if c.Local {
		return nil
	}
	hosts := make(map[string]runrecord.HostAccess, len(c.Nodes))
	for _, n := range c.Nodes {
		if r := c.Remotes[n.Name]; r != nil {
			hosts[n.Name] = runrecord.HostAccess{Via: control.Via(r), Net: control.NetMechanism(r)}
		}
	}
	return hosts
}
