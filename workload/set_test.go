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

func TestSetAddsUniqueAndAttemptedListsThemAll(t *testing.T) {
	s := NewSet()
	assert.Empty(t, s.Attempted())
	const workers, each = 6, 500
	got := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(1, uint64(w)))
			for range each {
				op := s.Next(rng)
				assert.Equal(t, history.FAdd, op.F)
				assert.Empty(t, op.Key)
				got[w] = append(got[w], op.Value.(int64))
			}
		})
	}
	wg.Wait()
	all := slices.Concat(got...)
	slices.Sort(all)
	require.Len(t, slices.Compact(slices.Clone(all)), workers*each, "every add is of a new element")
	assert.Equal(t, all, s.Attempted())
}
