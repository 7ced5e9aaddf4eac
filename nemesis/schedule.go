package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
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

// ScheduleVersion names how a schedule turns a seed into faults; a run
// made by another version replays its seed differently. Version 1 flipped
// one family every Interval ± Interval/2 (started it, or stopped it when
// active); version 2 held faults for a drawn time, back to back; version
// 3, Schedule's below, also shares the stage between sequences and random
// faults by time (SequenceShare) and budgets a sequence by what it took.
// It is kept with the fault records (faultrec), whose readers compare a
// run's with it; a change to the schedule's draws bumps it there.
const ScheduleVersion = faultrec.ScheduleVersion

// Schedule composes fault families over a test and keeps the stage busy:
// every fault is started with a hold, drawn between MinHold and Interval,
// and the next one starts before it ends, so faults come back to back and
// up to Overlap random faults of different families hold at once (Jepsen
// composes its nemeses so, too). A family is picked at random, by Weights
// and Turns, among those that are not active and that fit in the time
// left: a random fault needs MinHold of it, a OneShot (a targeted
// sequence) its Budget, or once it ran, twice what it took (see budget).
// A OneShot gets a clear stage: the active faults are stopped before it
// starts, it is stopped at once after, and the next fault starts as soon
// as it ends. Sequences longer than Interval hold the stage for at most
// SequenceShare of the time when random faults are scheduled too. Every
// transition is recorded in the history.
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
// All randomness comes from Rng (the families, the holds, the gaps, and
// what the faults choose), drawn in the order the transitions happen, so
// a seed replays the same schedule against faults that behave the same.
//
// A fault's error does not end the schedule: it is recorded as a nemesis
// op named "start-<family>" or "stop-<family>" whose value is a
// faultrec.Failure: the "error" (and, when the fault reports what it did
// before failing, its "op" and "value"); a step cut short says so in
// "cut_short" and its error ends with the reason, "(cut short: ...)"; the
// probes a refusal missed are in "probe_misses" (see ProbeError). A Start
// that fails with the zero Op did nothing (it was refused); one that fails
// with an Op may have partly taken effect, so its family counts as active
// and gets a Stop. After a Stop the family is inactive, failed or not,
// unless the Stop was cut short (the final stops stop it again): the final
// heal removes what a failed Stop left, such as the nodes a kill could not
// restart.
type Schedule struct {
	// Faults are the families, each with a distinct Name. The caller keeps
	// only those Available in the environment. They heal in this order.
	Faults []Fault
	// Weights, when set, holds one positive weight per fault: a pick
	// draws fault i with probability Weights[i] over the sum of the
	// weights of the faults it may pick. Nil weighs all alike.
	Weights []int
	// Turns, when set, says per fault whether it is of the group that
	// takes turns (the targeted families) or of the other (the random
	// ones): each group is picked as often as its weights say, and each
	// fault of it, once picked, waits until every other of its group has
	// been (see pickTurn), so that the few faults of a run cover the
	// families instead of repeating one; the weights still bias the order.
	Turns []bool
	// Interval (> 0) is the longest a random fault holds; each holds a
	// time drawn uniformly between MinHold and Interval (MinHold when
	// Interval is shorter). The next fault starts between a quarter and
	// half of its hold after it, so two overlap most of the time.
	Interval time.Duration
	// MinHold is the shortest hold: long enough for a fault to take
	// effect (default two of the Cluster's election timeouts, so that a
	// cut-off leader is deposed, say). The first fault starts an election
	// timeout after Run.
	MinHold time.Duration
	// Overlap bounds the random faults holding at once (default
	// DefaultOverlap); a targeted sequence always holds alone.
	Overlap int
	// Acts, when set, says per fault what it acts on (faultrec.Target:
	// processes, links, clocks): two faults that act on the same thing
	// never hold at once (a kill under a pause would leave the resume
	// waiting for a node that cannot answer), nor does a fault on the
	// processes beside any other, but for a pause on a system without
	// fault hooks (see scheduleRun.alone); "" overlaps anything.
	Acts     []faultrec.Target
	Rng      *rand.Rand
	Recorder *history.Recorder
	Cluster  *Cluster
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

// DefaultOverlap is how many random faults hold at once, at most, by
// default: two, so that a kill may meet a partition or a clock jump, as
// in Jepsen's composed nemeses, while a majority of most clusters stays.
const DefaultOverlap = 2

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
	r := newScheduleRun(s)
	runCtx, deadline, end := s.untilDeadline(ctx)
	r.loop(runCtx, deadline)
	end()
	healErr := r.finish(ctx)
	return errors.Join(healErr, r.recErr)
}

// scheduleRun is the state of one Run.
type scheduleRun struct {
	*Schedule
	active []bool          // by index in Faults
	began  []time.Time     // when each active random fault started
	ends   []time.Time     // when each active random fault's hold ends
	took   []time.Duration // the longest each fault's Start took (a OneShot's: its sequence)
	taken  []bool          // the faults that took their turn (see Turns), by index
	next   time.Time       // when the next fault starts; zero: none will
	// pending is the OneShot picked to start next, waiting until the
	// random faults have held MinHold; -1 when none is.
	pending int
	begun   time.Time     // when the loop began
	staged  time.Duration // how long sequences longer than Interval held the stage so far
	mixed   bool          // Faults has both OneShots and random faults: the share applies
	recErr  error         // the first error recording into the history
}

func newScheduleRun(s *Schedule) *scheduleRun {
	n := len(s.Faults)
	mixed := s.anyOf(func(j int) bool { return isOneShot(s.Faults[j]) }) &&
		s.anyOf(func(j int) bool { return !isOneShot(s.Faults[j]) })
	return &scheduleRun{Schedule: s, active: make([]bool, n), began: make([]time.Time, n), ends: make([]time.Time, n),
		took: make([]time.Duration, n), taken: make([]bool, n), pending: -1, mixed: mixed}
}

func (s *Schedule) validate() error {
	switch {
	case len(s.Faults) == 0:
		return errors.New("nemesis schedule: no faults")
	case s.Interval <= 0:
		return fmt.Errorf("nemesis schedule: interval %v must be positive", s.Interval)
	case s.MinHold < 0 || s.Overlap < 0:
		return fmt.Errorf("nemesis schedule: min hold %v and overlap %d must not be negative", s.MinHold, s.Overlap)
	case s.Rng == nil || s.Recorder == nil || s.Cluster == nil:
		return errors.New("nemesis schedule: Rng, Recorder and Cluster are required")
	case s.Weights != nil && len(s.Weights) != len(s.Faults):
		return fmt.Errorf("nemesis schedule: %d weights for %d faults", len(s.Weights), len(s.Faults))
	case s.Turns != nil && len(s.Turns) != len(s.Faults):
		return fmt.Errorf("nemesis schedule: %d turns for %d faults", len(s.Turns), len(s.Faults))
	case s.Acts != nil && len(s.Acts) != len(s.Faults):
		return fmt.Errorf("nemesis schedule: %d targets for %d faults", len(s.Acts), len(s.Faults))
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
	var cut *cutShortError
	value.CutShort = errors.As(err, &cut)
	var probe *ProbeError
	if errors.As(err, &probe) {
		value.ProbeMisses = probe.Misses
	}
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
