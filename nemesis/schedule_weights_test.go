package nemesis

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history/faultrec"
)

// all allows every fault.
func all(int) bool { return true }

// Weights set how often each family is picked, among those a pick may
// draw; a pick that may draw none says so and draws nothing.
func TestSchedulePicksByWeight(t *testing.T) {
	s := &Schedule{Faults: make([]Fault, 3), Weights: []int{1, 2, 7}, Rng: seeded(1)}
	counts := make([]int, 3)
	for range 10000 {
		i, ok := s.pick(all)
		require.True(t, ok)
		counts[i]++
	}
	assert.InDelta(t, 1000, counts[0], 150)
	assert.InDelta(t, 2000, counts[1], 200)
	assert.InDelta(t, 7000, counts[2], 200)

	clear(counts)
	for range 1000 {
		i, _ := s.pick(func(i int) bool { return i != 2 })
		counts[i]++
	}
	assert.Zero(t, counts[2], "a fault left out is never drawn")
	assert.InDelta(t, 333, counts[0], 60)

	before := *s.Rng
	_, ok := s.pick(func(int) bool { return false })
	assert.False(t, ok)
	assert.Equal(t, before, *s.Rng, "nothing drawn")
}

// A start picks by weight: with one family weighing 9 times the other, a
// schedule starts it far more often.
func TestScheduleFlipsByWeight(t *testing.T) {
	fx := newScheduleFixture(t, 11, "kill", "lease")
	// One at a time, so that each start may pick either; lease of the group
	// that takes turns, kill of the other, so that the weights pick the
	// group (within a group the faults take turns).
	fx.s.Weights, fx.s.Overlap, fx.s.Turns = []int{1, 9}, 1, []bool{false, true}
	_, err := fx.run(t, func(waits int) bool { return waits == 40 })
	assert.NoError(t, err)
	n := map[string]int{}
	for _, c := range fx.log.all() {
		n[c]++
	}
	assert.Greater(t, n["start lease"]+n["stop lease"], 4*(n["start kill"]+n["stop kill"]), "%v", n)
}

func TestScheduleRejectsBadWeights(t *testing.T) {
	cases := map[string][]int{
		"nemesis schedule: 1 weights for 2 faults":             {1},
		"nemesis schedule: weight 0 of lease must be positive": {1, 0},
	}
	for want, w := range cases {
		fx := newScheduleFixture(t, 1, "kill", "lease")
		fx.s.Weights = w
		assert.EqualError(t, fx.s.Run(context.Background()), want)
		assert.Empty(t, fx.log.all())
	}
	fx := newScheduleFixture(t, 1, "kill", "lease")
	fx.s.Turns = []bool{true}
	assert.EqualError(t, fx.s.Run(context.Background()), "nemesis schedule: 1 turns for 2 faults")
	fx = newScheduleFixture(t, 1, "kill", "lease")
	fx.s.Acts = []faultrec.Target{faultrec.TargetProcesses}
	assert.EqualError(t, fx.s.Run(context.Background()), "nemesis schedule: 1 targets for 2 faults")
}

// Faults that take turns are picked once each before any is picked again,
// and together as often as their weights say; the others are drawn by
// weight as before, and the weights still bias which turn comes first.
func TestScheduleTargetedFamiliesTakeTurns(t *testing.T) {
	s := &Schedule{Faults: make([]Fault, 5), Weights: []int{1, 1, 4, 4, 1}, Turns: []bool{false, false, true, true, true},
		Rng: seeded(3)}
	r := newScheduleRun(s)
	var turns []int
	counts := make([]int, 5)
	firsts := make([]int, 5)
	for range 9000 {
		i, _ := r.pickTurn(all)
		counts[i]++
		if s.Turns[i] {
			if len(turns)%3 == 0 {
				firsts[i]++
			}
			turns = append(turns, i)
		}
	}
	for k := 0; k+3 <= len(turns); k += 3 {
		cycle := slices.Sorted(slices.Values(turns[k : k+3]))
		require.Equal(t, []int{2, 3, 4}, cycle, "cycle %d: %v", k/3, turns[k:k+3])
	}
	assert.InDelta(t, counts[2], counts[4], 1, "each takes its turn once a cycle")
	assert.InDelta(t, 9000*9/11, counts[2]+counts[3]+counts[4], 200, "together as often as their weights say")
	assert.InDelta(t, counts[0], counts[1], float64(counts[0])/5, "the others by weight")
	assert.Greater(t, firsts[2], 2*firsts[4], "weight 4 goes first more often than weight 1: %v", firsts)
}
