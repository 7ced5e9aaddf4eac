package nemesis

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Weights set how often each family is picked; without them the draw is
// the uniform one of old, so old seeds replay.
func TestSchedulePicksByWeight(t *testing.T) {
	s := &Schedule{Faults: make([]Fault, 3), Weights: []int{1, 2, 7}, Rng: seeded(1)}
	counts := make([]int, 3)
	for range 10000 {
		counts[s.pick()]++
	}
	assert.InDelta(t, 1000, counts[0], 150)
	assert.InDelta(t, 2000, counts[1], 200)
	assert.InDelta(t, 7000, counts[2], 200)

	s.Weights, s.Rng = nil, seeded(7)
	want := seeded(7)
	for range 100 {
		assert.Equal(t, want.IntN(3), s.pick())
	}
}

// A flip picks by weight: with one family weighing 9 times the other, a
// schedule flips it far more often.
func TestScheduleFlipsByWeight(t *testing.T) {
	fx := newScheduleFixture(t, 11, "kill", "lease")
	fx.s.Weights = []int{1, 9}
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
}
