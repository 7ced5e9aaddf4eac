package nemesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"chaos/history"
)

// TimeSource is the schedule's clock. Tests replace it to step a schedule
// through its transitions without waiting.
type TimeSource interface {
	Now() time.Time
	// After delivers once d has passed.
	After(d time.Duration) <-chan time.Time
}

// systemTime is the real clock.
type systemTime struct{}

func (systemTime) Now() time.Time                         { return time.Now() }
func (systemTime) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Schedule composes fault families over a test: every Interval (± Jitter)
// it picks a family at random and flips it: Stop when it has an active
// fault, Start otherwise, so at most one fault per family is active at a
// time. Every transition is recorded in the history. When ctx ends or
// TimeLimit passes, it stops every active fault, then heals every family
// (HealAll) and records that too.
//
// All randomness comes from Rng (the delays, the families, and what the
// faults choose), so a seed replays the same schedule against faults that
// behave the same.
//
// A fault's error does not end the schedule: it is recorded as a nemesis
// op named "start-<family>" or "stop-<family>" whose value holds the
// "error" (and, when the fault reports what it did before failing, its
// "op" and "value"). A Start that fails with the zero Op did nothing; one
// that fails with an Op may have partly taken effect, so its family counts
// as active and gets a Stop. After a Stop the family is inactive, failed
// or not: the final heal removes what a failed Stop left.
type Schedule struct {
	// Faults are the families, each with a distinct Name. The caller keeps
	// only those Available in the environment. They heal in this order.
	Faults []Fault
	// Interval is the mean time between transitions (> 0); each delay is
	// drawn uniformly from Interval ± Jitter (0 <= Jitter <= Interval).
	Interval, Jitter time.Duration
	Rng              *rand.Rand
	Recorder         *history.Recorder
	Cluster          *Cluster
	// TimeLimit ends the schedule this long after Run starts; 0 means only
	// ctx ends it.
	TimeLimit time.Duration
	// Time is the clock (default: the system's).
	Time TimeSource
	// HealTimeout bounds the final stops and heal, which run after ctx has
	// ended (default 2 minutes).
	HealTimeout time.Duration
	// Log receives a line per transition and per error (default: none).
	Log *slog.Logger
}

// Run runs the schedule until ctx ends or TimeLimit passes, then stops and
// heals everything. It returns an error when the schedule is misconfigured
// (then it does nothing at all), and otherwise the final heal's error,
// joined with the first error recording into the history: non-nil means
// nodes may be left faulty.
func (s *Schedule) Run(ctx context.Context) error {
	if err := s.validate(); err != nil {
		return err
	}
	r := &scheduleRun{Schedule: s, active: make([]bool, len(s.Faults))}
	r.loop(ctx)
	healErr := r.finish(ctx)
	return errors.Join(healErr, r.recErr)
}

// scheduleRun is the state of one Run.
type scheduleRun struct {
	*Schedule
	active []bool // by index in Faults
	recErr error  // the first error recording into the history
}

func (s *Schedule) validate() error {
	switch {
	case len(s.Faults) == 0:
		return errors.New("nemesis schedule: no faults")
	case s.Interval <= 0:
		return fmt.Errorf("nemesis schedule: interval %v must be positive", s.Interval)
	case s.Jitter < 0 || s.Jitter > s.Interval:
		return fmt.Errorf("nemesis schedule: jitter %v must be within 0 and the interval %v", s.Jitter, s.Interval)
	case s.Rng == nil || s.Recorder == nil || s.Cluster == nil:
		return errors.New("nemesis schedule: Rng, Recorder and Cluster are required")
	}
	seen := map[string]bool{}
	for _, f := range s.Faults {
		if seen[f.Name()] {
			return fmt.Errorf("nemesis schedule: fault family %q appears twice", f.Name())
		}
		seen[f.Name()] = true
	}
	return nil
}

// loop flips a family after every delay until ctx ends or the time limit
// passes.
func (s *scheduleRun) loop(ctx context.Context) {
	clock := s.clock()
	var deadline time.Time
	if s.TimeLimit > 0 {
		deadline = clock.Now().Add(s.TimeLimit)
	}
	for {
		d, last := s.delay(), false
		if !deadline.IsZero() {
			left := deadline.Sub(clock.Now())
			if left <= 0 {
				return
			}
			if d >= left {
				d, last = left, true
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-clock.After(d):
		}
		if last {
			return
		}
		s.flip(ctx)
	}
}

// delay is the time to the next transition: Interval ± Jitter.
func (s *Schedule) delay() time.Duration {
	if s.Jitter == 0 {
		return s.Interval
	}
	return s.Interval - s.Jitter + time.Duration(s.Rng.Int64N(int64(2*s.Jitter)+1))
}

// flip stops or starts a family chosen at random.
func (s *scheduleRun) flip(ctx context.Context) {
	i := s.Rng.IntN(len(s.Faults))
	f := s.Faults[i]
	if s.active[i] {
		op, err := f.Stop(ctx, s.Cluster)
		// A stop cut short by the end of the run stays active, so finish
		// stops it again on its own context.
		s.active[i] = err != nil && ctx.Err() != nil
		s.record(f, "stop", op, err)
		return
	}
	op, err := f.Start(ctx, s.Cluster, s.Rng)
	s.active[i] = err == nil || op.F != ""
	s.record(f, "start", op, err)
}

// finish stops every active fault, then heals every family, with a bound
// of its own since ctx may be over.
func (s *scheduleRun) finish(ctx context.Context) error {
	timeout := s.HealTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	for i, f := range s.Faults {
		if s.active[i] {
			op, err := f.Stop(ctx, s.Cluster)
			s.record(f, "stop", op, err)
		}
	}
	families := make([]string, len(s.Faults))
	for i, f := range s.Faults {
		families[i] = f.Name()
	}
	err := HealAll(ctx, s.Cluster, s.Faults)
	value := map[string]any{"faults": families}
	if err != nil {
		value["error"] = err.Error()
		s.log().Error("nemesis: heal failed; nodes may be left faulty", "err", err)
	}
	s.nemesis(history.FHeal, value)
	return err
}

// record writes a transition, or a fault's error, into the history. A
// transition that did nothing (the zero Op) is not recorded.
func (s *scheduleRun) record(f Fault, phase string, op Op, err error) {
	if err == nil {
		if op.F != "" {
			s.log().Info("nemesis", "f", op.F, "value", op.Value)
			s.nemesis(op.F, op.Value)
		}
		return
	}
	s.log().Warn("nemesis: fault failed", "family", f.Name(), "phase", phase, "err", err)
	value := map[string]any{"error": err.Error()}
	if op.F != "" {
		value["op"], value["value"] = op.F, op.Value
	}
	s.nemesis(phase+"-"+f.Name(), value)
}

// nemesis records one nemesis op and keeps the first error doing so.
func (s *scheduleRun) nemesis(f string, value any) {
	if err := s.Recorder.Nemesis(f, value); err != nil {
		s.log().Error("nemesis: cannot record", "f", f, "err", err)
		if s.recErr == nil {
			s.recErr = err
		}
	}
}

func (s *Schedule) clock() TimeSource {
	if s.Time == nil {
		return systemTime{}
	}
	return s.Time
}

func (s *Schedule) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
