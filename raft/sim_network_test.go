package raft

import (
	"container/heap"
	"math/rand/v2"
)

// simNetwork is the simulator's in-memory network: every message gets a
// delivery tick drawn from [minDelay, maxDelay], so messages are reordered;
// some are dropped or duplicated; directed links can be cut. All choices come
// from the simulation's seeded source.
type simNetwork struct {
	rng      *rand.Rand
	queue    msgQueue
	seq      uint64
	cut      map[[2]uint64]bool // {from, to} -> messages are dropped
	dropRate float64
	dupRate  float64
	minDelay int
	maxDelay int
	sent     int
	dropped  int
}

type queuedMsg struct {
	at  int
	seq uint64
	m   Message
}

type msgQueue []queuedMsg

func (q msgQueue) Len() int { return len(q) }
func (q msgQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q msgQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *msgQueue) Push(x any)   { *q = append(*q, x.(queuedMsg)) }
func (q *msgQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (n *simNetwork) delay() int {
	return n.minDelay + n.rng.IntN(n.maxDelay-n.minDelay+1)
}

// send queues m at tick now, subject to loss and duplication.
func (n *simNetwork) send(now int, m Message) {
	n.sent++
	if n.dropRate > 0 && n.rng.Float64() < n.dropRate {
		n.dropped++
		return
	}
	copies := 1
	if n.dupRate > 0 && n.rng.Float64() < n.dupRate {
		copies = 2
	}
	for range copies {
		n.seq++
		heap.Push(&n.queue, queuedMsg{at: now + n.delay(), seq: n.seq, m: m})
	}
}

// due pops the messages to deliver at tick now; messages over cut links are
// dropped at delivery, so a partition also catches messages in flight.
func (n *simNetwork) due(now int, out []Message) []Message {
	for len(n.queue) > 0 && n.queue[0].at <= now {
		qm := heap.Pop(&n.queue).(queuedMsg)
		if n.cut[[2]uint64{qm.m.From, qm.m.To}] {
			n.dropped++
			continue
		}
		out = append(out, qm.m)
	}
	return out
}

// isolate cuts every link between the nodes of a and the nodes of b.
func (n *simNetwork) isolate(a, b []uint64) {
	for _, x := range a {
		for _, y := range b {
			n.cut[[2]uint64{x, y}] = true
			n.cut[[2]uint64{y, x}] = true
		}
	}
}

func (n *simNetwork) heal() { clear(n.cut) }
