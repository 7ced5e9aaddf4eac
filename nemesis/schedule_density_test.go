package nemesis

import (
	"context"
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
// a short run still holds it.
func TestScheduleStartsNoSequenceThatCannotFinish(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill")
		seq := fx.newSequence(t, "seq", 8*time.Second, 12*time.Second)
		huge := fx.newSequence(t, "huge", 5*time.Second, time.Minute)
		fx.s.Faults = append(fx.s.Faults, seq, huge)
		fx.s.Weights, fx.s.TimeLimit, fx.s.StepTimeout = []int{1, 4, 4}, 40*time.Second, 2*time.Minute
		_, err := fx.run(t, nil)
		require.NoError(t, err)
		sequences := 0
		for _, op := range fx.rec.Ops() {
			assert.NotContains(t, string(op.Value), "cut short", "seed %d", seed)
			if op.F == "on-huge" {
				// Its minute is capped at half the 40 s window: it began
				// with 20 s left, and took its 5 s.
				assert.LessOrEqual(t, time.Duration(op.Time), 40*time.Second-20*time.Second+5*time.Second, "seed %d", seed)
			}
			if op.F == "on-seq" {
				sequences++
				// on-seq is recorded when the 8 s sequence ends; it
				// began with at least its 12 s budget left.
				assert.LessOrEqual(t, time.Duration(op.Time), 40*time.Second-12*time.Second+8*time.Second, "seed %d", seed)
			}
		}
		assert.Positive(t, sequences, "seed %d", seed)
	}
}

// Two faults that act on the same thing never hold at once (a kill under
// a pause would leave the resume waiting for a node that cannot answer),
// nor does a fault on the processes beside another (a fault hook fails on
// a node killed or paused), while faults on links and clocks overlap.
func TestScheduleOverlapsOnlyFaultsOnDifferentThings(t *testing.T) {
	acts := map[string]faultrec.Target{"kill": faultrec.TargetProcesses, "pause": faultrec.TargetProcesses,
		"partition": faultrec.TargetLinks, "packet": faultrec.TargetLinks, "clock": faultrec.TargetClocks}
	overlapped := 0
	for seed := uint64(1); seed <= 20; seed++ {
		fx := newScheduleFixture(t, seed, "kill", "pause", "partition", "packet", "clock")
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
			if on[faultrec.TargetProcesses] > 0 {
				assert.Len(t, active, 1, "seed %d: a fault beside one on the processes: %v", seed, active)
			}
			if len(active) == 2 {
				overlapped++
			}
		}
	}
	assert.Positive(t, overlapped, "faults on different things overlap")
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
