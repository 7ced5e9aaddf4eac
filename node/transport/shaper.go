package transport

import (
	"container/heap"
	"math/rand/v2"
	"time"

	"chaos/raft"
)

// shaper is one peer's outbound fault pipeline: loss, duplication, delay
// with jitter, and reordering. It does no I/O and reads no clock: time is
// passed in, so given its random source its decisions are reproducible. It
// belongs to the peer's sender goroutine and is not safe for concurrent use.
//
// Invariant: pending() <= limit after every admit; messages beyond the
// limit are dropped, so a long delay cannot grow memory without bound.
type shaper struct {
	rng     *rand.Rand
	limit   int
	delayed delayHeap
	seq     uint64
	ready   []raft.Message // admitted with no delay, not yet taken
	held    []raft.Message // held back by the last take, released by the next
	spare   []raft.Message // the other buffer for held
	out     []raft.Message // the batch returned by the last take
}

func newShaper(rng *rand.Rand, limit int) *shaper {
	return &shaper{rng: rng, limit: limit}
}

// pending is the number of messages the shaper holds.
func (s *shaper) pending() int { return len(s.delayed) + len(s.ready) + len(s.held) }

// admit passes msgs through loss, duplication and delay under faults f at
// time now, and returns how many it dropped (lost, or over the limit).
func (s *shaper) admit(msgs []raft.Message, f Faults, now time.Time) (dropped int) {
	for i := range msgs {
		if f.Loss > 0 && s.rng.Float64() < f.Loss {
			dropped++
			continue
		}
		copies := 1
		if f.Duplicate > 0 && s.rng.Float64() < f.Duplicate {
			copies = 2
		}
		for range copies {
			if s.pending() >= s.limit {
				dropped++
				continue
			}
			s.admitOne(msgs[i], f, now)
		}
	}
	return dropped
}

func (s *shaper) admitOne(m raft.Message, f Faults, now time.Time) {
	d := f.Delay
	if f.Jitter > 0 {
		d += time.Duration(s.rng.Int64N(int64(f.Jitter)))
	}
	if d <= 0 {
		s.ready = append(s.ready, m)
		return
	}
	s.seq++
	heap.Push(&s.delayed, delayed{due: now.Add(d), seq: s.seq, m: m})
}

// next returns the departure time of the earliest delayed message.
func (s *shaper) next() (time.Time, bool) {
	if len(s.delayed) == 0 {
		return time.Time{}, false
	}
	return s.delayed[0].due, true
}

// take returns the batch to write at time now: delayed messages now due (in
// departure order), then those admitted without delay, except that each is
// held back with probability f.Reorder; then the messages held back by the
// previous take. The result is valid until the next call of take.
func (s *shaper) take(f Faults, now time.Time) []raft.Message {
	clear(s.out)
	batch := s.out[:0]
	for len(s.delayed) > 0 && !s.delayed[0].due.After(now) {
		batch = append(batch, heap.Pop(&s.delayed).(delayed).m)
	}
	batch = append(batch, s.ready...)
	clear(s.ready)
	s.ready = s.ready[:0]

	held := s.spare[:0]
	kept := batch[:0]
	for _, m := range batch {
		if f.Reorder > 0 && s.rng.Float64() < f.Reorder {
			held = append(held, m)
		} else {
			kept = append(kept, m)
		}
	}
	clear(batch[len(kept):]) // slots whose messages moved to held
	kept = append(kept, s.held...)
	clear(s.held)
	s.spare, s.held = s.held[:0], held
	s.out = kept
	return kept
}
