package workload

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
)

// newTestRecorder returns an in-memory recorder on a logical clock: each
// op is one nanosecond after the previous.
func newTestRecorder(t testing.TB) *history.Recorder {
	var ticks atomic.Int64
	rec := history.NewRecorder(nil, func() time.Duration { return time.Duration(ticks.Add(1)) }, history.RecorderOptions{})
	t.Cleanup(func() { _ = rec.Close() })
	return rec
}

func newTestRunner(t *testing.T, cfg Config) *Runner {
	t.Helper()
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = time.Minute
	}
	if cfg.Recorder == nil {
		cfg.Recorder = newTestRecorder(t)
	}
	r, err := NewRunner(cfg)
	require.NoError(t, err)
	return r
}

func checkAll(t *testing.T, h history.History) checker.Report {
	t.Helper()
	report, err := checker.CheckAll(t.Context(), h, checker.Options{
		Linearizable: checker.LinearizableOptions{Timeout: 30 * time.Second}})
	require.NoError(t, err)
	return report
}

// TestRunnerRegisterHistory runs the register workload against a
// linearizable store whose clients fail, lose answers and answer late at
// random, and checks the history the runner recorded.
func TestRunnerRegisterHistory(t *testing.T) {
	const workers, maxOps = 8, 3000
	gen, err := NewRegister(4)
	require.NoError(t, err)
	rec := newTestRecorder(t)
	r := newTestRunner(t, Config{Clients: flakyClients(newMemStore(), workers, 3, 1, 0.05, 0.05),
		MaxOps: maxOps, Generator: gen, Recorder: rec, Seed: 1})
	stats, err := r.Run(t.Context())
	require.NoError(t, err)

	h := rec.Ops()
	require.NoError(t, history.Validate(h))
	assert.Len(t, h, 2*maxOps, "every invoke is completed")
	for _, p := range h.Pairs() {
		require.False(t, p.Open(), "op %d left open", h[p.Invoke].Index)
	}
	counts := checker.OpCounts(h)
	assert.Equal(t, Stats{Elapsed: stats.Elapsed, Invoked: maxOps, OK: int64(counts.OK),
		Fail: int64(counts.Fail), Info: int64(counts.Info)}, stats)
	assert.Positive(t, counts.Info)
	assertProcessesRetire(t, h, workers)

	report := checkAll(t, h)
	assert.Equal(t, checker.Valid, report.Valid, "%+v", report.Checks)
}

// assertProcessesRetire checks docs/FORMATS.md's numbering: worker w runs as
// w, then w+workers after its first info, and so on; a process has one op
// open at a time and never invokes after its info.
func assertProcessesRetire(t *testing.T, h history.History, workers int) {
	t.Helper()
	current := make([]history.Process, workers) // each worker's live process
	for w := range current {
		current[w] = history.Process(w)
	}
	open := map[history.Process]bool{}
	for _, op := range h {
		w := int(op.Process) % workers
		require.Equal(t, current[w], op.Process, "op %d: worker %d runs as process %d", op.Index, w, current[w])
		if op.Type == history.Invoke {
			require.False(t, open[op.Process], "op %d: process %d has two ops open", op.Index, op.Process)
			open[op.Process] = true
			continue
		}
		delete(open, op.Process)
		if op.Type == history.Info {
			current[w] += history.Process(workers)
		}
	}
}

func TestRunnerStopsAtTheRateLimitersWord(t *testing.T) {
	var waits atomic.Int64
	gen, err := NewRegister(2)
	require.NoError(t, err)
	rec := newTestRecorder(t)
	r := newTestRunner(t, Config{Clients: flakyClients(newMemStore(), 5, 5, 2, 0, 0),
		Generator: gen, Recorder: rec, Rate: 1e9,
		wait: func(context.Context) error {
			if waits.Add(1) > 100 {
				return errors.New("no more tokens")
			}
			return nil
		}})
	stats, err := r.Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 100, stats.Invoked, "one invoke per token, none without")
	assert.Len(t, rec.Ops(), 200)
}

// TestRunnerRespectsRate uses the real limiter and the real clock, so its
// bounds are loose: at most burst + rate*duration ops, and a fair fraction
// of that.
func TestRunnerRespectsRate(t *testing.T) {
	const ratePerS, limit = 200.0, 300 * time.Millisecond
	gen, err := NewRegister(2)
	require.NoError(t, err)
	r := newTestRunner(t, Config{Clients: flakyClients(newMemStore(), 4, 2, 3, 0, 0),
		Generator: gen, Rate: ratePerS, TimeLimit: limit})
	stats, err := r.Run(t.Context())
	require.NoError(t, err)
	upper := 1 + ratePerS*limit.Seconds()
	assert.LessOrEqual(t, float64(stats.Invoked), upper+1, "burst 1 + %v ops/s x %v", ratePerS, limit)
	assert.GreaterOrEqual(t, float64(stats.Invoked), upper/4)
	assert.GreaterOrEqual(t, stats.Elapsed, limit*9/10)
}

// blockingClient blocks every operation until its ctx ends or release is
// closed, announcing each on entered.
type blockingClient struct {
	entered chan<- struct{}
	release <-chan struct{}
}

func (c *blockingClient) Do(ctx context.Context, op Op) history.Outcome {
	c.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return history.Outcome{Type: history.Info, Node: "n1", Error: ctx.Err().Error()}
	case <-c.release:
		return history.Outcome{Type: history.OK, Node: "n1"}
	}
}

func (c *blockingClient) Close() error { return nil }

func blockingClients(n int, release <-chan struct{}) ([]Client, <-chan struct{}) {
	entered := make(chan struct{}, n)
	clients := make([]Client, n)
	for i := range clients {
		clients[i] = &blockingClient{entered: entered, release: release}
	}
	return clients, entered
}

func TestRunnerCancelRecordsInFlightOpsAsInfo(t *testing.T) {
	const workers = 4
	clients, entered := blockingClients(workers, nil)
	rec := newTestRecorder(t)
	r := newTestRunner(t, Config{Clients: clients, Generator: NewSet(), Recorder: rec})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	var stats Stats
	var runErr error
	go func() {
		defer close(done)
		stats, runErr = r.Run(ctx)
	}()
	for range workers {
		<-entered
	}
	assert.EqualValues(t, workers, r.Stats().InFlight())
	cancel() // Ctrl-C
	<-done
	require.NoError(t, runErr)
	h := rec.Ops()
	require.NoError(t, history.Validate(h))
	require.Len(t, h, 2*workers)
	for _, op := range h[workers:] {
		assert.Equal(t, history.Info, op.Type, "op %d", op.Index)
	}
	assert.Equal(t, Stats{Elapsed: stats.Elapsed, Invoked: workers, Info: workers}, stats)
}

// TestRunnerTimeLimitLetsTheOpInFlightFinish: the time limit stops new
// invokes, but does not interrupt the request in flight.
func TestRunnerTimeLimitLetsTheOpInFlightFinish(t *testing.T) {
	h := runStoppedMidOp(t, Config{TimeLimit: 10 * time.Millisecond}, func() {})
	require.Len(t, h, 2, "one op, and no new one after the time limit")
	assert.Equal(t, history.OK, h[1].Type)
}

// TestRunnerStopLetsTheOpInFlightFinish: closing Stop ends the load as
// the time limit does: no new invoke, and the request in flight finishes.
func TestRunnerStopLetsTheOpInFlightFinish(t *testing.T) {
	stopLoad := make(chan struct{})
	h := runStoppedMidOp(t, Config{Stop: stopLoad}, func() { close(stopLoad) })
	require.Len(t, h, 2, "one op, and no new one after Stop")
	assert.Equal(t, history.OK, h[1].Type)
}

// runStoppedMidOp runs cfg with one worker whose op blocks; once the op is
// in flight it calls end, waits until the runner stops invoking, then
// lets the op finish, and returns the history.
func runStoppedMidOp(t *testing.T, cfg Config, end func()) history.History {
	release := make(chan struct{})
	clients, entered := blockingClients(1, release)
	stopped := make(chan context.Context, 1)
	rec := newTestRecorder(t)
	cfg.Clients, cfg.Generator, cfg.Recorder = clients, NewSet(), rec
	cfg.wait = func(stop context.Context) error {
		select {
		case stopped <- stop:
		default:
		}
		return stop.Err()
	}
	r := newTestRunner(t, cfg)
	done := make(chan error)
	go func() {
		_, err := r.Run(t.Context())
		done <- err
	}()
	stop := <-stopped
	<-entered
	end()
	<-stop.Done() // the runner stopped invoking while the op is in flight
	close(release)
	require.NoError(t, <-done)
	return rec.Ops()
}

func TestRunnerStatsWhileRunning(t *testing.T) {
	var clock atomic.Int64 // seconds; every reading advances it
	now := func() time.Time { return time.Unix(clock.Add(1), 0) }
	r := newTestRunner(t, Config{Clients: flakyClients(newMemStore(), 4, 2, 4, 0.1, 0.1),
		Generator: NewSet(), MaxOps: 2000, Now: now})
	assert.Equal(t, Stats{}, r.Stats(), "before Run")

	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for prev := (Stats{}); ; {
			s := r.Stats()
			assert.GreaterOrEqual(t, s.InFlight(), int64(0))
			assert.GreaterOrEqual(t, s.Completed(), prev.Completed())
			prev = s
			select {
			case <-done:
				return
			default:
			}
		}
	})
	stats, err := r.Run(t.Context())
	close(done)
	wg.Wait()
	require.NoError(t, err)
	assert.EqualValues(t, 2000, stats.Completed())
	assert.Positive(t, stats.Elapsed)
	assert.InDelta(t, 2000/stats.Elapsed.Seconds(), stats.OpsPerSecond(), 1e-9)
	assert.Equal(t, stats, r.Stats(), "after Run, the snapshot is frozen")
	_, err = r.Run(t.Context())
	assert.ErrorContains(t, err, "Run called twice")
}

func TestRunnerStopsOnARecordingError(t *testing.T) {
	rec := newTestRecorder(t)
	require.NoError(t, rec.Close())
	r := newTestRunner(t, Config{Clients: flakyClients(newMemStore(), 3, 3, 5, 0, 0),
		Generator: NewSet(), Recorder: rec})
	_, err := r.Run(t.Context()) // no time limit: only the error can end it
	require.ErrorIs(t, err, history.ErrClosed)
	assert.Regexp(t, `^worker \d: record invoke of add: `, err.Error())
}

func TestNewRunnerRejectsBadConfig(t *testing.T) {
	ok := func() Config {
		return Config{Clients: flakyClients(newMemStore(), 2, 2, 6, 0, 0), Generator: NewSet(),
			Recorder: newTestRecorder(t), RequestTimeout: time.Second}
	}
	_, err := NewRunner(ok())
	require.NoError(t, err)
	for want, change := range map[string]func(*Config){
		"no clients":      func(c *Config) { c.Clients = nil },
		"client 1 is nil": func(c *Config) { c.Clients[1] = nil },
		"at most 10000":   func(c *Config) { c.Clients = make([]Client, MaxConcurrency+1) },
		"rate -1":         func(c *Config) { c.Rate = -1 },
		"rate NaN":        func(c *Config) { c.Rate = math.NaN() },
		"rate +Inf":       func(c *Config) { c.Rate = math.Inf(1) },
		"time limit -1s":  func(c *Config) { c.TimeLimit = -time.Second },
		"max ops -1":      func(c *Config) { c.MaxOps = -1 },
		"request timeout": func(c *Config) { c.RequestTimeout = 0 },
		"no generator":    func(c *Config) { c.Generator = nil },
		"no recorder":     func(c *Config) { c.Recorder = nil },
	} {
		cfg := ok()
		change(&cfg)
		_, err := NewRunner(cfg)
		assert.ErrorContains(t, err, want)
	}
}

func TestRecordableOutcome(t *testing.T) {
	seven := int64(7)
	assert.Equal(t, history.Outcome{Type: history.OK, Value: int64(7)},
		recordable(history.Outcome{Type: history.OK, Value: &seven}))
	assert.Equal(t, history.Outcome{Type: history.OK},
		recordable(history.Outcome{Type: history.OK, Value: (*int64)(nil)}))
	out := recordable(history.Outcome{Type: history.Invoke, Node: "n2", Error: "oops"})
	assert.Equal(t, history.Info, out.Type, "a client's invalid type still closes the op")
	assert.Equal(t, "n2", out.Node)
	assert.Contains(t, out.Error, "oops")
}

func TestBindClientsSpreadsWorkersOverNodes(t *testing.T) {
	clients, err := BindClients(7, 3, func(node int) (Client, error) {
		return &flakyClient{node: "n" + string(rune('1'+node))}, nil
	})
	require.NoError(t, err)
	var nodes []string
	for _, c := range clients {
		nodes = append(nodes, c.(*flakyClient).node)
	}
	assert.Equal(t, []string{"n1", "n2", "n3", "n1", "n2", "n3", "n1"}, nodes)

	var made []*flakyClient
	_, err = BindClients(5, 3, func(node int) (Client, error) {
		if len(made) == 4 {
			return nil, errors.New("unreachable")
		}
		c := &flakyClient{}
		made = append(made, c)
		return c, nil
	})
	require.ErrorContains(t, err, "client 4 for node 1: unreachable")
	_, err = BindClients(0, 3, nil)
	assert.ErrorContains(t, err, "0 workers over 3 nodes")
	_, err = BindClients(3, 0, nil)
	assert.ErrorContains(t, err, "3 workers over 0 nodes")
	for _, c := range made {
		assert.True(t, c.closed, "clients made before the error are closed")
	}
}

// scriptedClient answers the outcomes of script in turn, then OK.
type scriptedClient struct {
	script []history.Outcome
	calls  int
}

func (c *scriptedClient) Do(context.Context, Op) history.Outcome {
	out := history.Outcome{Type: history.OK, Node: "n1"}
	if c.calls < len(c.script) {
		out = c.script[c.calls]
	}
	c.calls++
	return out
}

func (c *scriptedClient) Close() error { return nil }

// TestRunnerBacksOffOnlyWhenTheNodeDidNotTakeTheRequest: the worker waits
// after each Unavailable outcome, with waits that grow while they come in
// a row and start over after a success, and never after other outcomes.
func TestRunnerBacksOffOnlyWhenTheNodeDidNotTakeTheRequest(t *testing.T) {
	refused := history.Outcome{Type: history.Fail, Node: "n1", Error: "connection refused", Unavailable: true}
	noLeader := history.Outcome{Type: history.Info, Node: "n1", Error: "no leader", Unavailable: true}
	mismatch := history.Outcome{Type: history.Fail, Node: "n1", Error: "cas mismatch"}
	timedOut := history.Outcome{Type: history.Info, Node: "n1", Error: "timed out"}
	ok := history.Outcome{Type: history.OK, Node: "n1"}
	client := &scriptedClient{script: []history.Outcome{
		ok, refused, refused, noLeader, mismatch, timedOut, refused, ok, refused, ok}}
	var waits []time.Duration
	var waitErrs []error
	r := newTestRunner(t, Config{Clients: []Client{client}, Generator: NewSet(), MaxOps: 12, Seed: 4,
		sleep: func(ctx context.Context, d time.Duration) {
			waits = append(waits, d)
			waitErrs = append(waitErrs, ctx.Err())
		}})
	stats, err := r.Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 12, stats.Invoked)

	// Ceilings: 10, 20, 40 ms for three in a row; 80 ms after a fail and
	// an info, which neither wait nor reset; 10 ms after a success.
	ceilings := []time.Duration{10, 20, 40, 80, 10}
	require.Len(t, waits, len(ceilings), "one wait per Unavailable outcome: %v", waits)
	for i, c := range ceilings {
		c *= time.Millisecond
		assert.True(t, waits[i] >= c/2 && waits[i] <= c, "wait %d is %v, want within [%v, %v]", i, waits[i], c/2, c)
		assert.NoError(t, waitErrs[i], "the wait runs under a live context")
	}
}
