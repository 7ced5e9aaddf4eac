package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"chaos/history"
)

// Config configures a Runner.
type Config struct {
	// Clients holds one client per worker: worker i uses Clients[i] for its
	// whole life, so it stays bound to that client's node (see BindClients).
	// The concurrency of the test is len(Clients); a Client is used by one
	// worker at a time (see Client), so workers never share one. The
	// runner does not close them.
	Clients []Client
	// Rate is the target of operations per second over all workers, spread
	// evenly (a token bucket with a burst of one); 0 means as fast as the
	// clients go.
	Rate float64
	// TimeLimit is how long workers start new operations; 0 means no limit
	// (the run ends when ctx is cancelled or MaxOps is reached).
	TimeLimit time.Duration
	// Stop, once closed, ends new invocations as the time limit does
	// (operations in flight finish normally); nil means never. It lets the
	// caller pick the end while the load runs.
	Stop <-chan struct{}
	// MaxOps, if positive, is how many operations the workers invoke in
	// all before they stop.
	MaxOps int64
	// RequestTimeout bounds each operation: the client's ctx ends this long
	// after the invoke, and the client then answers info (or fail, for an
	// operation that changes nothing).
	RequestTimeout time.Duration
	Generator      Generator
	Recorder       *history.Recorder
	// Seed seeds every worker's randomness: worker i draws its operations
	// from a PCG seeded with (Seed, i), and its Backoff's jitter from one
	// seeded with (Seed, i|backoffStream), so that how often a node refused
	// does not change which operations a worker invokes.
	Seed uint64
	// Now is the clock Stats.Elapsed is measured on; nil means time.Now.
	// The recorder has its own clock, and TimeLimit and the rate are
	// measured on the real clock.
	Now func() time.Time

	// wait, if set, replaces the rate limiter: it is called before each
	// invoke and an error stops the worker. For tests.
	wait func(context.Context) error
	// sleep, if set, replaces the timer of every worker's Backoff. For
	// tests.
	sleep func(context.Context, time.Duration)
}

func (c *Config) validate() error {
	switch {
	case len(c.Clients) == 0:
		return errors.New("no clients: the runner needs one per worker")
	case len(c.Clients) > MaxConcurrency:
		return fmt.Errorf("%d clients; at most %d workers are allowed", len(c.Clients), MaxConcurrency)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate %v: want a finite number of ops/s, 0 for no limit", c.Rate)
	case c.TimeLimit < 0:
		return fmt.Errorf("time limit %v is negative", c.TimeLimit)
	case c.MaxOps < 0:
		return fmt.Errorf("max ops %d is negative", c.MaxOps)
	case c.RequestTimeout <= 0:
		return fmt.Errorf("request timeout %v: want a positive duration", c.RequestTimeout)
	case c.Generator == nil:
		return errors.New("no generator")
	case c.Recorder == nil:
		return errors.New("no recorder")
	}
	for i, cl := range c.Clients {
		if cl == nil {
			return fmt.Errorf("client %d is nil", i)
		}
	}
	return nil
}

// Runner runs a workload: len(Clients) workers, each invoking one
// operation at a time through its own client and recording it.
//
// Process numbers follow docs/FORMATS.md: worker w starts as process w; an
// operation that ends in info retires its process, and the worker goes on
// as process + concurrency. A process therefore never has two operations
// open and never invokes after an info.
type Runner struct {
	cfg      Config
	wait     func(context.Context) error // nil: no rate limit
	issued   atomic.Int64                // operations claimed against MaxOps
	progress progress
	ran      atomic.Bool
}

// NewRunner checks cfg and returns a runner ready to Run once.
func NewRunner(cfg Config) (*Runner, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("workload runner: %w", err)
	}
	r := &Runner{cfg: cfg, wait: cfg.wait, progress: progress{now: cfg.Now}}
	if r.progress.now == nil {
		r.progress.now = time.Now
	}
	if r.wait == nil && cfg.Rate > 0 {
		r.wait = rate.NewLimiter(rate.Limit(cfg.Rate), 1).Wait
	}
	return r, nil
}

// Run runs the workers until the time limit passes, MaxOps operations were
// invoked, or ctx is cancelled, and returns once every operation invoked was
// completed and recorded.
//
// Reaching the time limit or MaxOps only stops new invocations: operations
// in flight finish normally (within RequestTimeout). Cancelling ctx (Ctrl-C)
// also interrupts them: their clients see ctx end and answer info (or fail,
// for reads), which is recorded like any outcome, so no operation is left
// open. Cancellation is a normal way to end a run, not an error.
//
// The error is about recording (the recorder refused an op or is closed);
// the first one stops every worker.
func (r *Runner) Run(ctx context.Context) (Stats, error) {
	if !r.ran.CompareAndSwap(false, true) {
		return r.Stats(), errors.New("workload runner: Run called twice")
	}
	stop, cancel := r.stopContext(ctx)
	defer cancel()

	r.progress.begin()
	errs := make([]error, len(r.cfg.Clients))
	var wg sync.WaitGroup
	for i := range r.cfg.Clients {
		w := newWorker(r, i)
		wg.Go(func() {
			if err := w.run(ctx, stop); err != nil {
				errs[i] = fmt.Errorf("worker %d: %w", i, err)
				cancel()
			}
		})
	}
	wg.Wait()
	r.progress.finish()
	return r.Stats(), errors.Join(errs...)
}

// stopContext returns the context that tells workers to stop invoking:
// ctx, ended by the time limit if there is one, and by Stop.
func (r *Runner) stopContext(ctx context.Context) (context.Context, context.CancelFunc) {
	var stop context.Context
	var cancel context.CancelFunc
	if r.cfg.TimeLimit > 0 {
		stop, cancel = context.WithTimeout(ctx, r.cfg.TimeLimit)
	} else {
		stop, cancel = context.WithCancel(ctx)
	}
	if r.cfg.Stop != nil {
		go func() {
			select {
			case <-r.cfg.Stop:
				cancel()
			case <-stop.Done():
			}
		}()
	}
	return stop, cancel
}

// Stats returns a snapshot of the run's progress. It is safe to call at any
// time, from any goroutine, while Run runs.
func (r *Runner) Stats() Stats { return r.progress.snapshot() }

// claim reserves one operation against MaxOps and reports whether the
// worker may invoke it.
func (r *Runner) claim() bool {
	return r.cfg.MaxOps == 0 || r.issued.Add(1) <= r.cfg.MaxOps
}

// BindClients makes the clients of concurrency workers over nodes nodes:
// worker i gets dial(i % nodes), so workers spread evenly over the nodes
// and each stays bound to one. On error the clients already made are
// closed.
func BindClients(concurrency, nodes int, dial func(node int) (Client, error)) ([]Client, error) {
	if concurrency < 1 || nodes < 1 {
		return nil, fmt.Errorf("bind clients: %d workers over %d nodes; both must be at least 1", concurrency, nodes)
	}
	clients := make([]Client, 0, concurrency)
	for i := range concurrency {
		c, err := dial(i % nodes)
		if err != nil {
			for _, made := range clients {
				_ = made.Close() // the dial error is the one worth reporting
			}
			return nil, fmt.Errorf("client %d for node %d: %w", i, i%nodes, err)
		}
		clients = append(clients, c)
	}
	return clients, nil
}
