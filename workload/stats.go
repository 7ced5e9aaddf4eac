package workload

import (
	"sync"
	"sync/atomic"
	"time"

	"chaos/history"
)

// Stats is a snapshot of a run's progress: enough for a progress line while
// the load runs and for the summary after it.
type Stats struct {
	// Elapsed is the time since Run started, or the whole run once Run has
	// returned.
	Elapsed time.Duration
	// Invoked counts operations recorded as invoked; OK, Fail and Info count
	// their recorded completions.
	Invoked        int64
	OK, Fail, Info int64
}

// Completed returns how many operations have been recorded as completed.
func (s Stats) Completed() int64 { return s.OK + s.Fail + s.Info }

// InFlight returns how many operations were invoked and not yet completed.
func (s Stats) InFlight() int64 { return s.Invoked - s.Completed() }

// OpsPerSecond returns completed operations per second of Elapsed, or 0
// before any time has passed.
func (s Stats) OpsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Completed()) / s.Elapsed.Seconds()
}

// progress is what a Runner counts while it runs. Counters are atomic so
// that workers never wait on each other to count; the start and end times
// are behind a mutex, read only by snapshots.
type progress struct {
	invoked, ok, fail, info atomic.Int64

	now        func() time.Time
	mu         sync.Mutex
	start, end time.Time // zero until Run starts, and until it returns
}

func (p *progress) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = p.now()
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end = p.now()
}

// completed counts one recorded completion of type t.
func (p *progress) completed(t history.Type) {
	switch t {
	case history.OK:
		p.ok.Add(1)
	case history.Fail:
		p.fail.Add(1)
	default:
		p.info.Add(1)
	}
}

// snapshot returns the current Stats. Counts are read one at a time, so a
// snapshot taken while workers run may be off by the ops completing during
// it; completions are read before invocations, so InFlight is never
// negative.
func (p *progress) snapshot() Stats {
	s := Stats{OK: p.ok.Load(), Fail: p.fail.Load(), Info: p.info.Load()}
	s.Invoked = p.invoked.Load()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.start.IsZero():
	case p.end.IsZero():
		s.Elapsed = p.now().Sub(p.start)
	default:
		s.Elapsed = p.end.Sub(p.start)
	}
	return s
}
