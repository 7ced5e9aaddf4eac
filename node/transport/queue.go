package transport

import (
	"sync"

	"chaos/raft"
)

// queue is one peer's bounded outbound queue: many goroutines push, the
// peer's sender goroutine takes everything at once. Invariant: len(msgs)
// <= limit; push never blocks.
type queue struct {
	mu    sync.Mutex
	msgs  []raft.Message
	limit int
	// ready has a token whenever msgs may be non-empty and the sender has
	// not been told yet; capacity 1 coalesces wake-ups.
	ready chan struct{}
}

func newQueue(limit int) *queue {
	return &queue{limit: limit, ready: make(chan struct{}, 1)}
}

// push appends m; it returns false, dropping m, if the queue is full. The
// sender learns of it at the next wake.
func (q *queue) push(m raft.Message) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) >= q.limit {
		return false
	}
	q.msgs = append(q.msgs, m)
	return true
}

// wake tells the sender that messages may be waiting.
func (q *queue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// swap returns every queued message and makes buf, emptied, the queue's
// storage, so the sender and the queue trade two buffers without allocating.
func (q *queue) swap(buf []raft.Message) []raft.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.msgs
	q.msgs = buf[:0]
	return out
}
