package workload

import (
	"chaos/history"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRegisterNeedsAKey(t *testing.T) {
	_, err := NewRegister(0)
	require.ErrorContains(t, err, "at least 1")
	r, err := NewRegister(3)
	require.NoError(t, err)
	assert.Equal(t, []string{"k0", "k1", "k2"}, r.Keys())
}

// TestRegisterOps follows one worker's operations and checks every rule
// the generator promises: keys in range, unique values, cas expecting a
// recent value of its own key, and the 50/30/20 mix.
func TestRegisterOps(t *testing.T) {
	const n = 20000
	g, err := NewRegister(5)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	given := map[string][]int64{} // values handed out per key, in order
	seen := map[int64]bool{}
	count := map[string]int{}
	casOfLatest := 0
	for range n {
		op := g.Next(rng)
		count[op.F]++
		require.Contains(t, g.Keys(), op.Key)
		var v int64
		switch op.F {
		case history.FRead:
			require.Nil(t, op.Value)
			continue
		case history.FWrite:
			v = op.Value.(int64)
		case history.FCAS:
			pair := op.Value.([2]int64)
			recent := given[op.Key][max(0, len(given[op.Key])-registerRecent):]
			require.Contains(t, recent, pair[0], "cas on %s expects a recent value of that key", op.Key)
			if pair[0] == recent[len(recent)-1] {
				casOfLatest++
			}
			v = pair[1]
		default:
			t.Fatalf("unexpected f %q", op.F)
		}
		require.Positive(t, v)
		require.False(t, seen[v], "value %d handed out twice", v)
		seen[v] = true
		given[op.Key] = append(given[op.Key], v)
	}
	assert.InDelta(t, 0.5, float64(count[history.FRead])/n, 0.02)
	assert.InDelta(t, 0.3, float64(count[history.FWrite])/n, 0.02) // a little more: first ops on a key
	assert.InDelta(t, 0.2, float64(count[history.FCAS])/n, 0.02)
	assert.Greater(t, casOfLatest, count[history.FCAS]/8, "a fair share of cas expect the latest value")
}

func TestRegisterFirstOpOnAKeyIsNeverACAS(t *testing.T) {
	g, err := NewRegister(1000)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 7))
	touched := map[string]bool{}
	for range 5000 {
		op := g.Next(rng)
		if op.F == history.FRead {
			continue
		}
		if !touched[op.Key] {
			require.Equal(t, history.FWrite, op.F, "first value-giving op on %s", op.Key)
		}
		touched[op.Key] = true
	}
}

func TestRegisterIsDeterministicUnderASeed(t *testing.T) {
	run := func(seed uint64) []Op {
		g, err := NewRegister(10)
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(seed, 0))
		ops := make([]Op, 500)
		for i := range ops {
			ops[i] = g.Next(rng)
		}
		return ops
	}
	assert.Equal(t, run(42), run(42))
	assert.NotEqual(t, run(42), run(43))
}

// TestRegisterConcurrentValuesUnique runs workers against one generator;
// -race checks the locking, and no value may be handed out twice.
func TestRegisterConcurrentValuesUnique(t *testing.T) {
	g, err := NewRegister(3)
	require.NoError(t, err)
	const workers, each = 8, 2000
	values := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(9, uint64(w)))
			for range each {
				switch op := g.Next(rng); op.F {
				case history.FWrite:
					values[w] = append(values[w], op.Value.(int64))
				case history.FCAS:
					values[w] = append(values[w], op.Value.([2]int64)[1])
				}
			}
		})
	}
	wg.Wait()
	all := slices.Concat(values...)
	slices.Sort(all)
	require.NotEmpty(t, all)
	assert.Equal(t, len(all), len(slices.Compact(all)), "values are unique across workers")
}
