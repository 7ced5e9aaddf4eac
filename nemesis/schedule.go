package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"chaos/history"
	"chaos/history/faultrec"
)

// TimeSource is the schedule's clock. Tests replace it to step a schedule
// through its transitions, and past its deadline, without waiting.
type TimeSource interface {
	Now() time.Time
	// After delivers once d has passed.
	After(d time.Duration) <-chan time.Time
	// AfterFunc calls f once d has passed, unless stop is called first;
	// stop reports whether it prevented the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// systemTime is the real clock.
type systemTime struct{}

func (systemTime) Now() time.Time                         { return time.Now() }
func (systemTime) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (systemTime) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// ErrDeadline is why a step in flight at the schedule's deadline was cut
// short.
var ErrDeadline = errors.New("the schedule's deadline passed")

// Schedule composes fault families over a test: every Interval (± Jitter)
// it picks a family at random, by Weights, and flips it: Stop when it has
// an active fault, Start otherwise, so at most one fault per family is
// active at a time. A OneShot (a targeted sequence) gets a clear stage:
// the active faults are stopped before it starts, and it is stopped at
// once after. Every transition is recorded in the history.
//
// The schedule ends at its deadline (TimeLimit after Run starts, on Time)
// or when ctx ends, whichever comes first, and from then on it starts no
// fault: the step in flight, if any, is cut short at that moment (its
// context is cancelled), the active faults are stopped in heal order
// (pause first, kill last; see healOrder), every family heals (HealAll, in
// Faults order), and the heal is recorded. No step waits without a bound:
// StepTimeout bounds each Start and Stop during the schedule, HealTimeout
// each final Stop and each family's Heal. So Run returns within those
// bounds after the deadline, whatever the faults do.
//
// All randomness comes from Rng (the delays, the families, and what the
// faults choose), so a seed replays the same schedule against faults that
// behave the same.
//
// A fault's error does not end the schedule: it is recorded as a nemesis
// op named "start-<family>" or "stop-<family>" whose value holds the
// "error" (and, when the fault reports what it did before failing, its
// "op" and "value"); the error of a step cut short ends with the reason,
// "(cut short: ...)". A Start that fails with the zero Op did nothing; one
// that fails with an Op may have partly taken effect, so its family counts
// as active and gets a Stop. After a Stop the family is inactive, failed
// or not, unless the Stop was cut short (the final stops stop it again):
// the final heal removes what a failed Stop left, such as the nodes a
// kill could not restart.
type Schedule struct {
	// Faults are the families, each with a distinct Name. The caller keeps
	// only those Available in the environment. They heal in this order.
	Faults []Fault
	// Weights, when set, holds one positive weight per fault: a flip picks
	// fault i with probability Weights[i] over their sum. Nil picks
	// uniformly (and draws from Rng exactly as before weights existed, so
	// old seeds replay).
	Weights []int
	// Turns, when set, says per fault whether it takes turns: the faults
	// that take turns are picked together as often as their weights say,
	// but each, once picked, waits until every other of them has been
	// (see pickTurn). The targeted families take turns, so that the few
	// transitions of a run cover most of them instead of repeating one;
	// the weights still bias the order.
	Turns []bool
	// Interval is the mean time between transitions (> 0); each delay is
	// drawn uniformly from Interval ± Jitter (0 <= Jitter <= Interval).
	Interval, Jitter time.Duration
	Rng              *rand.Rand
	Recorder         *history.Recorder
	Cluster          *Cluster
	// TimeLimit puts the deadline this long after Run starts; 0 means only
	// ctx ends the schedule.
	TimeLimit time.Duration
	// Time is the clock of the delays and of the deadline (default: the
	// system's).
	Time TimeSource
	// StepTimeout bounds each Start and Stop during the schedule (default
	// DefaultStepTimeout).
	StepTimeout time.Duration
	// HealTimeout bounds each final Stop and each family's Heal, which run
	// after the deadline or ctx's end (default DefaultStepTimeout).
	HealTimeout time.Duration
	// Log receives a line per transition and per error (default: none).
	Log *slog.Logger
}

// DefaultStepTimeout bounds one step of a schedule that sets no bound of
// its own: room for a restart's wait (DefaultUpTimeout) and the commands
// around it.
const DefaultStepTimeout = 30 * time.Second

// Run runs the schedule until its deadline or ctx's end, then stops and
// heals everything. It returns an error when the schedule is misconfigured
// (then it does nothing at all), and otherwise the final heal's error,
// joined with the first error recording into the history: non-nil means
// nodes may be left faulty. The heal op is the last op Run records.
func (s *Schedule) Run(ctx context.Context) error {
	if err := s.validate(); err != nil {
		return err
	}
	r := &scheduleRun{Schedule: s, active: make([]bool, len(s.Faults)), taken: make([]bool, len(s.Faults))}
	runCtx, deadline, end := s.untilDeadline(ctx)
	r.loop(runCtx, deadline)
	end()
	healErr := r.finish(ctx)
	return errors.Join(healErr, r.recErr)
}

// scheduleRun is the state of one Run.
type scheduleRun struct {
	*Schedule
	active []bool // by index in Faults
	taken  []bool // the faults that took their turn (see Turns), by index
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
	case s.Weights != nil && len(s.Weights) != len(s.Faults):
		return fmt.Errorf("nemesis schedule: %d weights for %d faults", len(s.Weights), len(s.Faults))
	case s.Turns != nil && len(s.Turns) != len(s.Faults):
		return fmt.Errorf("nemesis schedule: %d turns for %d faults", len(s.Turns), len(s.Faults))
	}
	for i, w := range s.Weights {
		if w <= 0 {
			return fmt.Errorf("nemesis schedule: weight %d of %s must be positive", w, s.Faults[i].Name())
		}
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

// untilDeadline returns ctx, also cancelled with the cause ErrDeadline the
// moment TimeLimit has passed on the schedule's clock; the deadline (zero
// without a TimeLimit); and the function that releases both.
func (s *Schedule) untilDeadline(ctx context.Context) (context.Context, time.Time, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	if s.TimeLimit <= 0 {
		return ctx, time.Time{}, func() { cancel(nil) }
	}
	clock := s.clock()
	deadline := clock.Now().Add(s.TimeLimit)
	stop := clock.AfterFunc(s.TimeLimit, func() { cancel(ErrDeadline) })
	return ctx, deadline, func() { stop(); cancel(nil) }
}

// loop flips a family after every delay until ctx ends or the deadline
// (unless zero) passes, and starts no step after either. A delay runs from
// the start of the transition before it, so that the transitions come
// every Interval ± Jitter however long each takes (a targeted sequence
// takes seconds); one that took longer than the delay is followed at once.
func (s *scheduleRun) loop(ctx context.Context, deadline time.Time) {
	clock := s.clock()
	var spent time.Duration // by the transition before
	for {
		d, last := max(s.delay()-spent, 0), false
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
		if last || ctx.Err() != nil {
			return
		}
		began := clock.Now()
		s.flip(ctx)
		spent = clock.Now().Sub(began)
	}
}

// delay is the time to the next transition: Interval ± Jitter.
func (s *Schedule) delay() time.Duration {
	if s.Jitter == 0 {
		return s.Interval
	}
	return s.Interval - s.Jitter + time.Duration(s.Rng.Int64N(int64(2*s.Jitter)+1))
}

// flip stops or starts a family chosen at random, within StepTimeout and
// until ctx ends. A OneShot fault first gets a clear stage: every active
// fault is stopped, in heal order, before it starts; and it is stopped at
// once when it started without an error.
func (s *scheduleRun) flip(ctx context.Context) {
	i := s.pickTurn()
	f := s.Faults[i]
	ctx, cancel := bounded(ctx, s.StepTimeout)
	defer cancel()
	if isOneShot(f) {
		s.clearStage(ctx, i)
	}
	if s.active[i] {
		s.stop(ctx, i)
		return
	}
	op, err := f.Start(ctx, s.Cluster, s.Rng)
	s.active[i] = err == nil || op.F != ""
	s.record(f, "start", op, cutShort(ctx, err))
	if err == nil && isOneShot(f) {
		s.stop(ctx, i)
	}
}

// clearStage stops every active fault, in heal order, before a OneShot
// starts: its sequence aims at the roles the cluster reports and moves
// nodes from one side of a cut to the other, which a node killed, paused
// or cut off by another fault would spoil (it would find no leader, or a
// leader that cannot reach a majority). Random faults then compose with
// each other, and the targeted ones run on a healthy cluster.
// (A OneShot that failed midway is active too, with what it left.) The
// fault i, about to flip, is left to the flip.
func (s *scheduleRun) clearStage(ctx context.Context, i int) {
	for _, j := range healOrder(s.Faults) {
		if s.active[j] && j != i {
			s.stop(ctx, j)
		}
	}
}

// stop stops the active fault i and records it.
func (s *scheduleRun) stop(ctx context.Context, i int) {
	f := s.Faults[i]
	op, err := f.Stop(ctx, s.Cluster)
	// A stop cut short stays active, so finish stops it again on a
	// context of its own.
	s.active[i] = err != nil && ctx.Err() != nil
	s.record(f, "stop", op, cutShort(ctx, err))
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
	value := faultrec.Failure{Error: err.Error()}
	if op.F != "" {
		raw, merr := json.Marshal(op.Value)
		if merr != nil {
			// What the fault did cannot be written: the error says so.
			value.Error += fmt.Sprintf(" (its %s value cannot be written: %v)", op.F, merr)
		}
		value.Op, value.Value = op.F, raw
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

// pickTurn draws the index of the fault to flip: by every weight (see
// pick), which says whether a fault that takes turns flips; if one does,
// it is drawn again, by weight, among those that have not had their turn,
// and marked as having had it; once every one has, all are back. So the
// faults that take turns flip as often as their weights say, each in
// turn.
func (s *scheduleRun) pickTurn() int {
	i := s.pick(nil)
	if s.Turns == nil || !s.Turns[i] {
		return i
	}
	out := make([]bool, len(s.Faults))
	for j, turns := range s.Turns {
		out[j] = !turns || s.taken[j]
	}
	i = s.pick(out)
	s.taken[i] = true
	for j, turns := range s.Turns {
		if turns && !s.taken[j] {
			return i
		}
	}
	clear(s.taken)
	return i
}

// pick draws the index of the fault to flip, among those not left out
// (nil leaves none out): uniformly without Weights, else by them.
func (s *Schedule) pick(out []bool) int {
	weight := func(i int) int {
		switch {
		case out != nil && out[i]:
			return 0
		case s.Weights == nil:
			return 1
		}
		return s.Weights[i]
	}
	if s.Weights == nil && !slices.Contains(out, true) {
		return s.Rng.IntN(len(s.Faults)) // the draw of old, so old seeds replay
	}
	total := 0
	for i := range s.Faults {
		total += weight(i)
	}
	r := s.Rng.IntN(total)
	for i := range s.Faults {
		if r < weight(i) {
			return i
		}
		r -= weight(i)
	}
	return len(s.Faults) - 1 // unreachable: r < total
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
