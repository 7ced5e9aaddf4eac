package nemesis

import "time"

// What a fault needs of the fault window before it may start, and the
// stage's share between the targeted sequences and the random faults.

// budget is the time fault i needs before the deadline to be started.
// For a OneShot: once its sequence ran in this run, twice the longest it
// took and restartBudget (what this cluster needs, with room), within its
// bound; before that, its bound. For a random fault: MinHold and the
// time its start takes (the longest it took in this run, at least
// startBudget), so that it is not cut short.
func (s *scheduleRun) budget(i int) time.Duration {
	if _, ok := oneShotOf(s.Faults[i]); ok {
		b := s.bound(i)
		if took := s.took[i]; took > 0 {
			b = min(b, 2*took+restartBudget)
		}
		return b
	}
	return s.minHold() + max(s.took[i], startBudget)
}

// bound is the longest the OneShot i's sequence is given: its Budget on
// the cluster, or the longest it took in this run when that was longer,
// at most the step timeout that bounds it and half the fault window (a
// sequence whose bound a short run cannot hold still runs there, its
// waits ending early: see runSequence).
func (s *scheduleRun) bound(i int) time.Duration {
	o, _ := oneShotOf(s.Faults[i])
	b := min(max(o.Budget(s.Cluster), s.took[i]), s.stepTimeout())
	if s.TimeLimit > 0 {
		b = min(b, s.TimeLimit/2) // a short window still holds a sequence, ended early
	}
	return b
}

// SequenceShare is the part of the time so far that long sequences may
// have held the stage, when random faults are scheduled too. A sequence
// that holds the stage longer than a random fault's longest hold
// (Interval) takes that time from the random faults, which cannot start
// meanwhile: a new sequence starts only while such sequences held at most
// this much, so that on a system whose sequences take tens of seconds (an
// election timeout of a second) the random faults still get half the
// window. Shorter sequences are one fault among the others, and come back
// to back.
const SequenceShare = 0.5

// mayStage reports whether a sequence may take the stage at now: always
// in a schedule of sequences alone, and otherwise while the long
// sequences held it for at most SequenceShare of the time since the loop
// began.
func (s *scheduleRun) mayStage(now time.Time) bool {
	return !s.mixed || float64(s.staged) <= SequenceShare*float64(now.Sub(s.begun))
}

// startBudget is the time a random fault's start is given before it has
// started once in the run: a start over SSH to every host takes a second
// or more.
const startBudget = 2 * time.Second
