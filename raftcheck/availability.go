package raftcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"chaos/checker"
	"chaos/eventlog"
	"chaos/foreignlog"
	"chaos/history"
)

// AvailabilityOptions tune [Availability]. Zero values take the defaults.
type AvailabilityOptions struct {
	// RecoveryBound: after the final heal a client op must succeed within
	// this long. Default 10s.
	RecoveryBound time.Duration
	// RecoveryAdvisory says the bound is not the system's own (a described
	// system that states none): a recovery later than it is reported
	// (AvailabilityDetails.SlowRecovery) but does not make the verdict
	// invalid. No recovery at all, while the history went on for the
	// bound, still does.
	RecoveryAdvisory bool
	// Gap: a stretch longer than this without a successful client op is a
	// client-visible unavailability window. Default 1s.
	Gap time.Duration
	// Livelock is the election-livelock rule. Default
	// DefaultLivelockTerms within DefaultLivelockWindow.
	Livelock LivelockRule
	// Stuck is the rule for a cluster leaderless while a majority is up
	// and connected. Default DefaultStuckBound.
	Stuck StuckRule
}

// withDefaults fills the zero options with the defaults.
func (o AvailabilityOptions) withDefaults() AvailabilityOptions {
	if o.RecoveryBound <= 0 {
		o.RecoveryBound = DefaultRecoveryBound
	}
	if o.Gap <= 0 {
		o.Gap = DefaultGap
	}
	if o.Livelock.Terms <= 0 {
		o.Livelock.Terms = DefaultLivelockTerms
	}
	if o.Livelock.Window <= 0 {
		o.Livelock.Window = DefaultLivelockWindow
	}
	if o.Stuck.Bound <= 0 {
		o.Stuck.Bound = DefaultStuckBound
	}
	return o
}

// Default option values.
const (
	DefaultRecoveryBound = 10 * time.Second
	DefaultGap           = time.Second
)

// isHeal reports whether a nemesis op with function f is one that ends
// faults; each gets a Recovery in the details. Which of them is the final
// heal is faultsEnd's to say.
func isHeal(f string) bool {
	switch f {
	case history.FStopPartition, history.FStart, history.FResume, history.FClockReset, history.FStopPacket, history.FHeal:
		return true
	}
	return false
}

// LeaderlessWindow is a stretch of wall time (node clocks) during which no
// node led the newest term (see [Leaderless]).
type LeaderlessWindow struct {
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Duration time.Duration `json:"duration_ns"`
	Open     bool          `json:"open,omitempty"` // still leaderless at the last event
}

// ClientWindow is a stretch of history time (ns since the test started)
// longer than the gap without a successful client op.
type ClientWindow struct {
	Start    int64         `json:"start"`
	End      int64         `json:"end"`
	Duration time.Duration `json:"duration_ns"`
	Open     bool          `json:"open,omitempty"` // the history ended inside it
}

// Recovery is what followed one heal: the time until the first client op
// completed ok at or after it.
type Recovery struct {
	Index     int64         `json:"index"` // the heal's history index
	F         string        `json:"f"`
	Time      int64         `json:"time"`
	Recovered bool          `json:"recovered"`
	After     time.Duration `json:"after_ns,omitempty"` // when recovered
}

// AvailabilityDetails is what [Availability] reports beside its verdict.
type AvailabilityDetails struct {
	Leaderless      []LeaderlessWindow `json:"leaderless"`
	LeaderlessTotal time.Duration      `json:"leaderless_total_ns"`
	Unavailable     []ClientWindow     `json:"unavailable"`
	Recoveries      []Recovery         `json:"recoveries"`
	FinalHeal       *Recovery          `json:"final_heal,omitempty"` // the heal the verdict is about
	RecoveryBound   time.Duration      `json:"recovery_bound_ns"`
	// RecoveryAdvisory is the option: the bound is reported against, not
	// enforced.
	RecoveryAdvisory bool `json:"recovery_bound_advisory,omitempty"`
	// SlowRecovery says how the recovery after the final heal exceeded an
	// advisory bound; empty when it did not.
	SlowRecovery string `json:"slow_recovery,omitempty"`
	// Liveness is what the liveness rules found in the event logs; absent
	// without event logs.
	Liveness *LivenessDetails `json:"liveness,omitempty"`
	Reason   string           `json:"reason,omitempty"` // why invalid or unknown
}

// Availability measures how available the cluster was and decides whether
// it recovered and whether it stayed live.
//
// Leaderless windows come from events (wall time, see [Leaderless]);
// client-visible unavailability windows and recoveries come from h
// (history time). The verdict merges two judgements (false beats unknown,
// which beats true):
//
//   - Recovery after the final heal: the op that ended the last fault
//     still active, after which none was active until the end (see
//     faultsEnd; a fault that failed to stop ends only at the heal), or,
//     when no fault began, the first heal op or the start of the history.
//     Valid: a client op completed ok within RecoveryBound of it. Invalid:
//     the first ok came later than that, or none came although the history
//     went on for RecoveryBound. Unknown: no ok came but the history ended
//     too soon to tell, the last fault was never healed, or the history is
//     empty.
//   - Liveness, with events only: invalid on an election livelock
//     (opts.Livelock, see [LivelockRule]) or on a leaderless stretch longer
//     than opts.Stuck.Bound while a majority of nodes was up and connected
//     (see [StuckRule]); otherwise it does not change the verdict.
func Availability(events []eventlog.Event, h history.History, opts AvailabilityOptions) checker.Result {
	return TimelineAvailability(events, TimelineOf(h), opts)
}

// TimelineAvailability is Availability on the timeline of a history.
func TimelineAvailability(events []eventlog.Event, t *Timeline, opts AvailabilityOptions) checker.Result {
	r, _ := readEvents(sliceSource(events)) // a slice gives no error
	return r.availability(analyze(r.events), t, opts)
}

// availability is [TimelineAvailability] over the events read, f their
// analysis.
func (r *runEvents) availability(f foreignlog.Facts, t *Timeline, opts AvailabilityOptions) checker.Result {
	opts = opts.withDefaults()
	h := t.history()
	d := &AvailabilityDetails{Leaderless: leaderlessWindows(f), Unavailable: []ClientWindow{},
		Recoveries: []Recovery{}, RecoveryBound: opts.RecoveryBound, RecoveryAdvisory: opts.RecoveryAdvisory}
	for _, w := range d.Leaderless {
		d.LeaderlessTotal += w.Duration
	}
	valid := recoveryVerdict(h, t.okTimes(), opts, d)
	if r.count == 0 {
		return checker.Result{Valid: valid, Details: d}
	}
	d.Liveness = judgeLiveness(r, f, h, opts.Livelock, opts.Stuck)
	if !d.Liveness.found() {
		return checker.Result{Valid: valid, Details: d}
	}
	var texts []string
	for _, l := range d.Liveness.Livelocks {
		texts = append(texts, l.Text)
	}
	for _, s := range d.Liveness.Stuck {
		texts = append(texts, s.Text)
	}
	if d.Reason != "" {
		texts = append(texts, d.Reason)
	}
	d.Reason = strings.Join(texts, "; ")
	return checker.Result{Valid: checker.Invalid, Details: d}
}

// recoveryVerdict judges the recovery after the final heal (see
// [Availability]), filling d's client windows and recoveries, and d.Reason
// unless valid. h is a timeline's history, oks its ok times.
func recoveryVerdict(h history.History, oks []int64, opts AvailabilityOptions, d *AvailabilityDetails) checker.Validity {
	if len(h) == 0 {
		d.Reason = "empty history"
		return checker.Unknown
	}
	d.Unavailable = clientWindows(oks, h[0].Time, h[len(h)-1].Time, opts.Gap)
	end, lastFault := faultsEnd(h)
	for i, op := range h {
		if op.Process.IsNemesis() && op.Type != history.Invoke && isHeal(op.F) {
			r := recovery(op, oks)
			d.Recoveries = append(d.Recoveries, r)
			if d.FinalHeal == nil && (i == end || lastFault < 0) {
				d.FinalHeal = &r
			}
		}
	}
	ref := d.FinalHeal
	switch {
	case ref == nil && lastFault >= 0:
		f := h[lastFault]
		d.Reason = fmt.Sprintf("the last fault (%s, history index %d) was never healed", f.F, f.Index)
		return checker.Unknown
	case ref == nil:
		start := recovery(history.Op{Index: h[0].Index, F: "test start", Time: h[0].Time}, oks)
		ref = &start
	}
	valid := judgeRecovery(ref, h[len(h)-1].Time, opts.RecoveryBound, d)
	if opts.RecoveryAdvisory && valid == checker.Invalid && ref.Recovered {
		d.SlowRecovery = d.Reason + " (advisory: the system states no recovery bound)"
		d.Reason = ""
		return checker.Valid
	}
	return valid
}

// judgeRecovery decides the verdict about ref (the final heal, or the start of
// a run without faults), given when the history ended, and sets d.Reason
// unless valid.
func judgeRecovery(ref *Recovery, end int64, bound time.Duration, d *AvailabilityDetails) checker.Validity {
	switch {
	case ref.Recovered && ref.After <= bound:
		return checker.Valid
	case ref.Recovered:
		d.Reason = fmt.Sprintf("first ok client op came %v after %s (history index %d), bound %v",
			ref.After, ref.F, ref.Index, bound)
		return checker.Invalid
	case time.Duration(end-ref.Time) >= bound:
		d.Reason = fmt.Sprintf("no client op succeeded in the %v after %s (history index %d), bound %v",
			time.Duration(end-ref.Time), ref.F, ref.Index, bound)
		return checker.Invalid
	default:
		d.Reason = fmt.Sprintf("no client op succeeded after %s (history index %d), but the history ends %v after it, under the bound %v",
			ref.F, ref.Index, time.Duration(end-ref.Time), bound)
		return checker.Unknown
	}
}

// recovery measures the time from op to the first ok at or after it.
func recovery(op history.Op, oks []int64) Recovery {
	r := Recovery{Index: op.Index, F: op.F, Time: op.Time}
	if i, _ := slices.BinarySearch(oks, op.Time); i < len(oks) {
		r.Recovered, r.After = true, time.Duration(oks[i]-op.Time)
	}
	return r
}

// clientWindows returns the stretches longer than gap between start, the
// ok times and end (history times) without an ok.
func clientWindows(oks []int64, start, end int64, gap time.Duration) []ClientWindow {
	ws := []ClientWindow{}
	prev := start
	for _, t := range oks {
		if time.Duration(t-prev) > gap {
			ws = append(ws, ClientWindow{Start: prev, End: t, Duration: time.Duration(t - prev)})
		}
		prev = max(prev, t)
	}
	if time.Duration(end-prev) > gap {
		ws = append(ws, ClientWindow{Start: prev, End: end, Duration: time.Duration(end - prev), Open: true})
	}
	return ws
}
