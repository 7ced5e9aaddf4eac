package nemesis

import (
	"context"
	"time"

	"chaos/history/faultrec"
)

// How a schedule keeps the stage busy: the loop waits for the next start or
// the end of a hold, whichever comes first, and acts on it (see Schedule).

// loop starts and stops faults until ctx ends or the deadline (unless
// zero) passes, and starts no step after either. The faults holding at the
// end are left to finish, which stops them in heal order.
func (s *scheduleRun) loop(ctx context.Context, deadline time.Time) {
	clock := s.clock()
	s.begun = clock.Now()
	s.next = s.begun.Add(s.election())
	for ctx.Err() == nil {
		wake, ok := s.wakeAt()
		if !ok && deadline.IsZero() {
			<-ctx.Done() // nothing fits and nothing holds: wait for the end
			return
		}
		last := !ok || (!deadline.IsZero() && !wake.Before(deadline))
		if last {
			wake = deadline
		}
		select {
		case <-ctx.Done():
			return
		case <-clock.After(max(wake.Sub(clock.Now()), 0)):
		}
		if last || ctx.Err() != nil {
			return
		}
		s.stopEnded(ctx)
		if now := clock.Now(); ctx.Err() == nil && !s.next.IsZero() && !now.Before(s.next) && s.mayStart() {
			s.startNext(ctx, deadline)
		}
	}
}

// wakeAt is when the loop acts next: the next start (once fewer than
// Overlap random faults hold) or the end of a hold, whichever comes first;
// false when neither will come.
func (s *scheduleRun) wakeAt() (time.Time, bool) {
	var wake time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	if s.mayStart() {
		earlier(s.next)
	}
	earlier(s.firstEnd())
	return wake, !wake.IsZero()
}

// stopEnded stops, in heal order, the random faults whose hold has ended.
func (s *scheduleRun) stopEnded(ctx context.Context) {
	now := s.clock().Now()
	for _, i := range healOrder(s.Faults) {
		if s.active[i] && !s.ends[i].IsZero() && !now.Before(s.ends[i]) {
			s.stopBounded(ctx, i)
		}
	}
}

// mayStart reports whether a fault may start now: a sequence waits for
// the stage, or fewer than Overlap random faults hold.
func (s *scheduleRun) mayStart() bool {
	return s.pending >= 0 || s.activeRandom() < s.overlap()
}

// startNext starts the sequence that waits for the stage, if it still
// fits, or else picks a family among those that are not active and fit
// in the time left before deadline, and starts it: a OneShot's sequence
// on a clear stage (once every random fault has held MinHold: until then
// it waits), a random fault with a hold. When none fits, no fault starts
// again until a hold ends (if a fault holds) or at all (if the time left
// is too short for any).
func (s *scheduleRun) startNext(ctx context.Context, deadline time.Time) {
	now := s.clock().Now()
	left := time.Duration(1<<63 - 1)
	if !deadline.IsZero() {
		left = deadline.Sub(now)
	}
	if i := s.pending; i >= 0 {
		s.pending = -1
		if s.budget(i) <= left {
			s.runSequence(ctx, i, deadline)
			return
		}
	}
	shareLeft := s.mayStage(now)
	i, ok := s.pickTurn(func(j int) bool {
		if isOneShot(s.Faults[j]) {
			// A sequence clears the stage: what holds does not keep it out.
			return shareLeft && !s.active[j] && s.budget(j) <= left
		}
		return !s.active[j] && !s.actsOnActive(j) && s.budget(j) <= left
	})
	if !ok {
		s.next = s.firstEnd() // a family may be free then, or none will be
		s.nextStage(now)
		return
	}
	if isOneShot(s.Faults[i]) {
		if held := s.heldMinHold(); held.After(now) {
			s.pending, s.next = i, held
			return
		}
		s.runSequence(ctx, i, deadline)
		return
	}
	hold := s.drawHold()
	if hold > left-restartBudget {
		// Its stop (a restart, say) would run into the deadline: it holds
		// to the deadline, and the final stops stop it on their own bound.
		hold = left
	}
	gap := hold/4 + time.Duration(s.Rng.Int64N(int64(hold/4)+1))
	if active, _ := s.start(ctx, i); active {
		s.began[i] = s.clock().Now()
		s.ends[i] = s.began[i].Add(hold)
	}
	s.next = now.Add(gap)
	s.nextStage(now)
}

// nextStage brings the next pick forward to the moment the sequences'
// share lets one start again, when that comes first: a random fault's gap
// does not keep the stage from them.
func (s *scheduleRun) nextStage(now time.Time) {
	if s.mayStage(now) {
		return
	}
	at := s.begun.Add(time.Duration(float64(s.staged) / SequenceShare))
	if s.next.IsZero() || at.Before(s.next) {
		s.next = at
	}
}

// actsOnActive reports whether fault i may not hold beside an active fault
// (see Acts): one on the same thing, or one on the processes beside any
// other, but for a pause on a system without fault hooks (see alone).
func (s *scheduleRun) actsOnActive(i int) bool {
	if s.Acts == nil || s.Acts[i] == "" {
		return false
	}
	for j, a := range s.active {
		if a && s.Acts[j] != "" && (s.Acts[j] == s.Acts[i] || s.alone(i) || s.alone(j)) {
			return true
		}
	}
	return false
}

// alone reports whether fault i, when it holds, holds beside no other: a
// fault on the processes that restarts nodes (a kill, a storage fault),
// whose restarted node may need its peers to answer (etcd serves its
// clients only once it reached its cluster, which a cut keeps from it), or
// any fault on the processes of a system with fault hooks (a cut or a
// clock set through a node's hooks fails on a node killed or paused). A
// pause on a system without hooks holds beside a cut: the resumed node
// answers on its own.
func (s *scheduleRun) alone(i int) bool {
	if s.Acts[i] != faultrec.TargetProcesses {
		return false
	}
	return s.Cluster.Hooks != nil || s.Faults[i].Name() != faultrec.NamePause
}

// heldMinHold is when every active random fault will have held MinHold.
func (s *scheduleRun) heldMinHold() time.Time {
	var at time.Time
	for i, began := range s.began {
		if s.active[i] && !began.IsZero() && began.Add(s.minHold()).After(at) {
			at = began.Add(s.minHold())
		}
	}
	return at
}

// runSequence runs the OneShot i on a clear stage: it stops every active
// fault, in heal order, then starts i, and stops it at once (a sequence
// that failed midway too, undoing what it left). The sequence stops
// waiting restartBudget before its budget (or the step timeout, or the
// deadline) runs out, leaving that for its undo. The next fault starts a
// heartbeat after it ends; after a refusal (a Start that did nothing), an
// election timeout after, so that a cluster that refuses every sequence
// is not asked in a tight loop.
func (s *scheduleRun) runSequence(ctx context.Context, i int, deadline time.Time) {
	for _, j := range healOrder(s.Faults) {
		if s.active[j] && j != i {
			s.stopBounded(ctx, j)
		}
	}
	clock := s.clock()
	began := clock.Now()
	defer func() {
		if held := clock.Now().Sub(began); held > s.Interval {
			s.staged += held // longer than any random hold: charged to the share
		}
	}()
	end := began.Add(s.bound(i))
	if !deadline.IsZero() && deadline.Before(end) {
		end = deadline
	}
	active, _ := s.start(withSequenceEnd(ctx, end.Add(-restartBudget)), i)
	if active {
		s.stopBounded(ctx, i) // over, or failed midway: either way, undone now
	}
	s.next = clock.Now().Add(s.Cluster.Timing.WithDefaults().Heartbeat)
	if !active {
		s.next = clock.Now().Add(s.election())
	}
}

// start starts fault i within StepTimeout and records it; it reports
// whether the family is now active, and whether it started without an
// error.
func (s *scheduleRun) start(ctx context.Context, i int) (active, ok bool) {
	f := s.Faults[i]
	ctx, cancel := bounded(ctx, s.StepTimeout)
	defer cancel()
	clock := s.clock()
	began := clock.Now()
	op, err := f.Start(ctx, s.Cluster, s.Rng)
	took := clock.Now().Sub(began)
	s.took[i] = max(s.took[i], took)
	if v, ok := op.Value.(faultrec.Targeted); ok { // a sequence: say how long it held the stage
		v.TookMS = new(took.Milliseconds())
		op.Value = v
	}
	s.active[i] = err == nil || op.F != ""
	s.ends[i] = time.Time{}
	s.record(f, "start", op, cutShort(ctx, err))
	return s.active[i], err == nil
}

// stopBounded stops the active fault i within StepTimeout and records it.
func (s *scheduleRun) stopBounded(ctx context.Context, i int) {
	ctx, cancel := bounded(ctx, s.StepTimeout)
	defer cancel()
	f := s.Faults[i]
	op, err := f.Stop(ctx, s.Cluster)
	// A stop cut short stays active, so finish stops it again on a
	// context of its own.
	s.active[i] = err != nil && ctx.Err() != nil
	s.ends[i] = time.Time{}
	s.record(f, "stop", op, cutShort(ctx, err))
}

// firstEnd is the earliest end of a hold, zero when no fault holds.
func (s *scheduleRun) firstEnd() time.Time {
	var first time.Time
	for i, end := range s.ends {
		if s.active[i] && !end.IsZero() && (first.IsZero() || end.Before(first)) {
			first = end
		}
	}
	return first
}

// activeRandom counts the active faults that are no OneShot.
func (s *scheduleRun) activeRandom() int {
	n := 0
	for i, a := range s.active {
		if a && !isOneShot(s.Faults[i]) {
			n++
		}
	}
	return n
}

// drawHold draws a random fault's hold, uniformly between MinHold and
// Interval (MinHold when Interval is shorter).
func (s *scheduleRun) drawHold() time.Duration {
	lo := s.minHold()
	if s.Interval <= lo {
		return lo
	}
	return lo + time.Duration(s.Rng.Int64N(int64(s.Interval-lo)+1))
}

// stepTimeout is StepTimeout, or DefaultStepTimeout.
func (s *Schedule) stepTimeout() time.Duration {
	if s.StepTimeout > 0 {
		return s.StepTimeout
	}
	return DefaultStepTimeout
}

// minHold is MinHold, or two of the Cluster's election timeouts.
func (s *Schedule) minHold() time.Duration {
	if s.MinHold > 0 {
		return s.MinHold
	}
	return 2 * s.election()
}

// election is the Cluster's election timeout (db.DefaultTiming's when it
// states none).
func (s *Schedule) election() time.Duration {
	return s.Cluster.Timing.WithDefaults().ElectionTimeout
}

// overlap is Overlap, or DefaultOverlap.
func (s *Schedule) overlap() int {
	if s.Overlap > 0 {
		return s.Overlap
	}
	return DefaultOverlap
}
