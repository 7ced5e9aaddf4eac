package workload

import (
	"chaos/history"
	"math/rand/v2"
	"sync/atomic"
)

// Set generates the set workload: adds of unique integers 1, 2, 3, ...
// The final read, after the load and the healing, is FinalSetRead's.
type Set struct {
	last atomic.Int64 // the last element handed out
}

// NewSet returns a set generator.
func NewSet() *Set { return &Set{} }

// Next returns an add of an element never handed out before. It draws
// nothing from rng.
func (s *Set) Next(*rand.Rand) Op {
	return Op{F: history.FAdd, Value: s.last.Add(1)}
}

// Attempted returns every element handed out so far, in increasing order:
// what the final read must look for.
func (s *Set) Attempted() []int64 {
	n := s.last.Load()
	elements := make([]int64, n)
	for i := range elements {
		elements[i] = int64(i) + 1
	}
	return elements
}
