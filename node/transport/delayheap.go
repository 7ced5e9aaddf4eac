package transport

import (
	"time"

	"chaos/raft"
)

// delayed is a message waiting for its departure time.
type delayed struct {
	due time.Time
	seq uint64 // admission order, so equal due times keep FIFO order
	m   raft.Message
}

// delayHeap is a min-heap of delayed messages ordered by (due, seq), for
// container/heap.
type delayHeap []delayed

func (h delayHeap) Len() int { return len(h) }

func (h delayHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}

func (h delayHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *delayHeap) Push(x any) { *h = append(*h, x.(delayed)) }

// Pop removes the last element, zeroing its slot so the heap's spare
// capacity does not keep message data alive.
func (h *delayHeap) Pop() any {
	old := *h
	last := old[len(old)-1]
	old[len(old)-1] = delayed{}
	*h = old[:len(old)-1]
	return last
}
