package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"chaos/history"
)

// backoffStream sets the PCG stream of a worker's Backoff apart from the
// stream of its operations (see Config.Seed).
const backoffStream = 1 << 63

// worker is one of a Runner's workers. It is used by one goroutine.
type worker struct {
	r       *Runner
	client  Client
	rng     *rand.Rand
	backoff *Backoff
	process int // the current process; retired by an info
	stride  int // the concurrency: how far the process moves on when retired
}

func newWorker(r *Runner, i int) *worker {
	return &worker{r: r, client: r.cfg.Clients[i], process: i, stride: len(r.cfg.Clients),
		rng:     rand.New(rand.NewPCG(r.cfg.Seed, uint64(i))),
		backoff: NewBackoff(rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)|backoffStream)), r.cfg.sleep)}
}

// run invokes operations one at a time until stop is done or MaxOps is
// reached. Requests run under load (the caller's ctx), not stop: reaching
// the time limit lets the operation in flight finish. After an operation
// the node did not take, the worker backs off (see Backoff) until stop at
// the latest.
func (w *worker) run(load, stop context.Context) error {
	for stop.Err() == nil && w.r.claim() {
		if w.r.wait != nil {
			if err := w.r.wait(stop); err != nil {
				return nil // stopped while waiting for the rate limit
			}
		}
		out, err := w.step(load)
		if err != nil {
			return err
		}
		w.backoff.After(stop, out)
	}
	return nil
}

// step performs and records one operation, and returns its outcome.
func (w *worker) step(load context.Context) (history.Outcome, error) {
	rec := w.r.cfg.Recorder
	op := w.r.cfg.Generator.Next(w.rng)
	p, err := rec.Invoke(w.process, op.F, op.Key, op.Value)
	if err != nil {
		return history.Outcome{}, fmt.Errorf("record invoke of %s: %w", strings.TrimSpace(op.F+" "+op.Key), err)
	}
	w.r.progress.invoked.Add(1)

	ctx, cancel := context.WithTimeout(load, w.r.cfg.RequestTimeout)
	out := recordable(w.client.Do(ctx, op))
	cancel()

	if err := rec.Complete(p, out); err != nil {
		return out, fmt.Errorf("record %v of op %d: %w", out.Type, p.Index, err)
	}
	w.r.progress.completed(out.Type)
	if out.Type == history.Info {
		w.process += w.stride
	}
	return out, nil
}

// recordable makes a client's outcome fit the history: a *int64 value (a
// register read) becomes the integer or nil, and an outcome of no valid
// completion type, which a correct client never returns, becomes info so
// the operation is still closed.
func recordable(out history.Outcome) history.Outcome {
	if !out.Type.Completes() {
		out.Error = fmt.Sprintf("client returned outcome type %v (recorded as info): %s", out.Type, out.Error)
		out.Type = history.Info
	}
	if v, ok := out.Value.(*int64); ok {
		if v == nil {
			out.Value = nil
		} else {
			out.Value = *v
		}
	}
	return out
}
