package nemesis

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
	"chaos/history"
	"chaos/history/faultrec"
)

// held returns, from a history of the fixture's fake faults, each fault's
// hold as [start, end) on the history's clock, and the time with at least
// one fault in effect.
func held(t *testing.T, rec *history.Recorder) (holds [][2]time.Duration, covered time.Duration) {
	t.Helper()
	began := map[string]time.Duration{}
	var since time.Duration
	for _, op := range rec.Ops() {
		at := time.Duration(op.Time)
		if fam, ok := strings.CutPrefix(op.F, "on-"); ok {
			if len(began) == 0 {
				since = at
			}
			began[fam] = at
		}
		if fam, ok := strings.CutPrefix(op.F, "off-"); ok {
			require.Contains(t, began, fam, "%s stopped while inactive", fam)
			holds = append(holds, [2]time.Duration{began[fam], at})
			delete(began, fam)
			if len(began) == 0 {
				covered += at - since
			}
		}
	}
	require.Empty(t, began, "every fault stopped")
	return holds, covered
}

// With a slow system's timing (a JVM server: 5 s election timeout, so a
// 40 s fault window in a 60 s run with its 20 s recovery), the window
// holds many faults, each for at least two election timeouts, and some
// fault is in effect most of the time.
func TestScheduleKeepsASlowSystemBusy(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill", "pause", "partition", "clock", "packet")
		fx.s.Cluster = &Cluster{Timing: db.Timing{Heartbeat: 500 * time.Millisecond, ElectionTimeout: 5 * time.Second}}
		fx.s.TimeLimit = 40 * time.Second
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		holds, covered := held(t, fx.rec)
		// From 5 s, holds of 10 s, two at once, none starting after 30 s:
		// at most 7 fit, and gaps drawn at random leave 5 or more.
		assert.GreaterOrEqual(t, len(holds), 5, "seed %d: %v", seed, nemesisOps(t, fx.rec))
		for _, h := range holds {
			assert.GreaterOrEqual(t, h[1]-h[0], 10*time.Second, "seed %d: a hold of less than two election timeouts: %v", seed, h)
		}
		assert.GreaterOrEqual(t, covered, 28*time.Second, "seed %d: faults in effect for 70%% of the window", seed)
	}
}

// With etcd's timing and the default interval, a 55 s window holds many
// more faults, at most two at once.
func TestScheduleKeepsAFastSystemBusy(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill", "pause", "partition", "clock", "packet")
		fx.s.TimeLimit = 55 * time.Second
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		holds, covered := held(t, fx.rec)
		assert.GreaterOrEqual(t, len(holds), 10, "seed %d", seed)
		assert.GreaterOrEqual(t, covered, 50*time.Second, "seed %d", seed)
		ops := nemesisOps(t, fx.rec)
		for i := range ops {
			assert.LessOrEqual(t, len(replay(t, ops[:i+1])), 2, "seed %d: %v", seed, ops[:i+1])
		}
		for _, op := range fx.rec.Ops() {
			// A stop would run into the deadline there: the fault holds to
			// it, and the final stops stop it.
			at := time.Duration(op.Time)
			assert.False(t, at > 55*time.Second-restartBudget && at < 55*time.Second, "seed %d: %s at %v", seed, op.F, at)
		}
	}
}

// A sequence that cannot finish before the deadline is not started:
// another family is, and nothing is cut short. One whose budget exceeds
// half the window is given half the window (its waits end early), so that
// a short run still holds it; once a sequence ran, its budget is twice
// what it took and a restart's room (huge: 5 s, so 13 s), within that.
func TestScheduleStartsNoSequenceThatCannotFinish(t *testing.T) {
	ran := map[string]int{}
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill")
		seq := fx.newSequence(t, "seq", 8*time.Second, 12*time.Second)
		huge := fx.newSequence(t, "huge", 5*time.Second, time.Minute)
		fx.s.Faults = append(fx.s.Faults, seq, huge)
		fx.s.Weights, fx.s.TimeLimit, fx.s.StepTimeout = []int{1, 4, 4}, 40*time.Second, 2*time.Minute
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		hugeBudget := 20 * time.Second // its minute, capped at half the 40 s window
		for _, op := range fx.rec.Ops() {
			assert.NotContains(t, string(op.Value), "cut short", "seed %d", seed)
			switch op.F {
			case "on-huge": // recorded when it ends: it began 5 s before
				assert.LessOrEqual(t, time.Duration(op.Time)-5*time.Second, 40*time.Second-hugeBudget, "seed %d", seed)
				hugeBudget = 2*5*time.Second + restartBudget
				ran["huge"]++
			case "on-seq": // min(12 s, 2×8 s + 3 s): always 12 s
				assert.LessOrEqual(t, time.Duration(op.Time)-8*time.Second, 40*time.Second-12*time.Second, "seed %d", seed)
				ran["seq"]++
			}
		}
	}
	assert.Positive(t, ran["seq"])
	assert.Positive(t, ran["huge"])
}

// A sequence's budget, once it ran, is what it took on this cluster (with
// room), not its bound: a sequence bounded by 30 s that takes 4 s runs
// back to back while 11 s are left, seven times in a 40 s window (its
// bound, capped at 20 s, would have stopped it after five).
func TestScheduleBudgetsASequenceByWhatItTook(t *testing.T) {
	fx := newScheduleFixture(t, 1)
	fx.s.Faults = []Fault{fx.newSequence(t, "seq", 4*time.Second, 30*time.Second)}
	fx.s.TimeLimit = 40 * time.Second
	_, err := fx.run(t, nil)
	require.NoError(t, err)
	ends := opTimes(fx.rec, "on-seq")
	// From 1 s, every 4.1 s: the seventh starts at 25.6 s with 14.4 s
	// left; the eighth would start at 29.7 s with 10.3 s left.
	assert.Len(t, ends, 7, "%v", ends)
}

// With etcd's timing (a second's election timeout) and sequences that take
// 20 s, the sequences hold the stage for about half the window and the
// random faults get the rest: a 55 s window holds at most two sequences
// and six or more random faults; without random faults the sequences
// come back to back.
func TestScheduleSharesTheStageByTime(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill", "pause", "partition", "packet")
		fx.s.Cluster = &Cluster{Timing: db.Timing{Heartbeat: 100 * time.Millisecond, ElectionTimeout: time.Second}}
		for _, name := range []string{"vote", "figure", "delay"} {
			fx.s.Faults = append(fx.s.Faults, fx.newSequence(t, name, 20*time.Second, 30*time.Second))
		}
		fx.s.Weights, fx.s.Turns = []int{1, 1, 1, 1, 4, 4, 4}, []bool{false, false, false, false, true, true, true}
		fx.s.TimeLimit = 55 * time.Second
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		sequences := len(opTimes(fx.rec, "on-vote", "on-figure", "on-delay"))
		random := len(opTimes(fx.rec, "on-kill", "on-pause", "on-partition", "on-packet"))
		assert.LessOrEqual(t, sequences, 2, "seed %d", seed)
		assert.GreaterOrEqual(t, random, 6, "seed %d", seed)
	}
}

// Two faults that act on the same thing never hold at once (a kill under
// a pause would leave the resume waiting for a node that cannot answer),
// nor does a kill beside another fault (a restarted etcd answers only once
// it reached its peers); on a system with fault hooks, nor does a pause (a
// fault hook fails on a node paused), while faults on links and clocks
// overlap. Without hooks (iptables, a proxy, a fake clock's file), a pause
// holds beside a cut.
func TestScheduleOverlapsOnlyFaultsOnDifferentThings(t *testing.T) {
	for _, hooks := range []bool{true, false} {
		overlapped, beside := overlaps(t, hooks)
		assert.Positive(t, overlapped, "hooks %v: faults on different things overlap", hooks)
		assert.Zero(t, beside["kill"], "hooks %v: a kill beside another fault", hooks)
		if hooks {
			assert.Zero(t, beside["pause"], "a pause beside another fault")
		} else {
			assert.Positive(t, beside["pause"], "without hooks, a pause beside another fault")
		}
	}
}

// overlaps runs schedules of the five random families on a system with
// fault hooks or without, checks that no two faults on the same thing
// hold at once, and counts the moments two faults held, and by family
// those when one of them acted on the processes.
func overlaps(t *testing.T, hooks bool) (overlapped int, beside map[string]int) {
	beside = map[string]int{}
	acts := map[string]faultrec.Target{"kill": faultrec.TargetProcesses, "pause": faultrec.TargetProcesses,
		"partition": faultrec.TargetLinks, "packet": faultrec.TargetLinks, "clock": faultrec.TargetClocks}
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill", "pause", "partition", "packet", "clock")
		if hooks {
			fx.s.Cluster = &Cluster{Hooks: &db.ChaosNodeHooks{}}
		}
		for _, f := range fx.s.Faults {
			fx.s.Acts = append(fx.s.Acts, acts[f.Name()])
		}
		fx.s.TimeLimit = 55 * time.Second
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		ops := nemesisOps(t, fx.rec)
		for i := range ops {
			active := replay(t, ops[:i+1])
			on := map[faultrec.Target]int{}
			for fam := range active {
				on[acts[fam]]++
				assert.Equal(t, 1, on[acts[fam]], "seed %d: two faults on %s: %v", seed, acts[fam], active)
			}
			if len(active) == 2 {
				overlapped++
				for fam := range active {
					if acts[fam] == faultrec.TargetProcesses {
						beside[fam]++
					}
				}
			}
		}
	}
	return overlapped, beside
}

// What a random fault acts on does not keep a sequence out: a sequence
// clears the stage, so it starts while a kill holds too, stopping it.
func TestScheduleActsDoNotKeepSequencesOut(t *testing.T) {
	fx := newScheduleFixture(t, 1, "kill")
	fx.s.Faults = append(fx.s.Faults, fx.newSequence(t, "seq", time.Second, time.Second))
	fx.s.Acts = []faultrec.Target{faultrec.TargetProcesses, faultrec.TargetRoles}
	r := newScheduleRun(fx.s)
	now := fx.clock.Now()
	fx.faults["kill"].active, r.active[0] = true, true
	r.began[0], r.ends[0] = now.Add(-time.Minute), now.Add(time.Minute) // held long enough, not over
	r.startNext(context.Background(), time.Time{})
	assert.Equal(t, []string{"stop kill", "start seq", "stop seq"}, fx.log.all())
}

// The share is a bound, not a pause: the moment the sequences' share lets
// one start again, the next pick comes (a random fault's gap does not hold
// it back), so a sequence picked that often starts, on average, within a
// second of that moment (measured: 0.35 s; 1.6 s when the gap held it).
func TestScheduleGivesSequencesTheirShare(t *testing.T) {
	var late time.Duration
	n := 0
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill", "pause")
		fx.s.Faults = append(fx.s.Faults, fx.newSequence(t, "seq", 12*time.Second, 15*time.Second))
		fx.s.Weights, fx.s.Turns = []int{1, 1, 20}, []bool{false, false, true}
		fx.s.Acts = []faultrec.Target{faultrec.TargetProcesses, faultrec.TargetProcesses, ""}
		fx.s.TimeLimit = 100 * time.Second
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		staged := time.Duration(0)
		for _, end := range opTimes(fx.rec, "on-seq") {
			began := end - 12*time.Second // recorded as it ends
			if staged > 0 {
				late += began - 2*staged // the share lets it start at twice the time staged
				n++
			}
			staged += 12 * time.Second
		}
	}
	require.Positive(t, n)
	assert.LessOrEqual(t, late/time.Duration(n), time.Second)
}

// A sequence no longer than a random fault's longest hold is one fault
// among the others: it is not charged to the share, and sequences picked
// that often come back to back, a heartbeat apart (or a random fault's
// MinHold, when the pick drew one).
func TestScheduleChargesOnlyLongSequences(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill", "pause")
		fx.s.Faults = append(fx.s.Faults, fx.newSequence(t, "seq", 5*time.Second, 8*time.Second))
		fx.s.Weights, fx.s.Turns = []int{1, 1, 20}, []bool{false, false, true}
		fx.s.TimeLimit = 60 * time.Second
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		sequences := len(opTimes(fx.rec, "on-seq"))
		// From 1 s, 5.1 s apart, while 8 s are left: ten, less the picks
		// that drew a random fault. Charged, they would be five at most.
		assert.GreaterOrEqual(t, sequences, 7, "seed %d", seed)
	}
}

// opTimes returns the times, on the history's clock, of the ops of rec
// called one of names, in order.
func opTimes(rec *history.Recorder, names ...string) []time.Duration {
	var at []time.Duration
	for _, op := range rec.Ops() {
		if slices.Contains(names, op.F) {
			at = append(at, time.Duration(op.Time))
		}
	}
	return at
}
