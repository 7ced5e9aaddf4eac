package node

import (
	"sync"
	"time"
)

// skewClock is the node's own sense of time, which the clock fault hook can
// bend: virtual time = start + rate * (real elapsed since the last change)
// + offset. The event loop ticks raft whenever virtual time crosses a
// multiple of the tick interval, so skew changes election timeouts,
// heartbeats and the lease of lease-read for real.
type skewClock struct {
	mu       sync.Mutex
	now      func() time.Time
	base     time.Time     // real time of the last rate change
	virtBase time.Duration // virtual elapsed time at base
	rate     float64
	offset   time.Duration
}

func newSkewClock(now func() time.Time) *skewClock {
	return &skewClock{now: now, base: now(), rate: 1}
}

// elapsed is the virtual time since the clock was made.
func (c *skewClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.elapsedLocked()
}

func (c *skewClock) elapsedLocked() time.Duration {
	real := c.now().Sub(c.base)
	return c.virtBase + time.Duration(float64(real)*c.rate) + c.offset
}

// set changes the rate (> 0) and bumps the offset by delta.
func (c *skewClock) set(rate float64, delta time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.virtBase = c.elapsedLocked() - c.offset
	c.base = c.now()
	if rate > 0 {
		c.rate = rate
	}
	c.offset += delta
}

// reset returns to real time's rate and removes the offset. Virtual time
// never goes backward past what was already ticked; see ticker.
func (c *skewClock) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.virtBase = c.elapsedLocked() - c.offset
	c.base = c.now()
	c.rate = 1
	c.offset = 0
}

func (c *skewClock) state() (rate float64, offset time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate, c.offset
}

// ticker converts virtual time into raft ticks. due returns how many ticks
// are owed since the last call; when virtual time jumps back it owes none
// until it catches up again, as a wall-clock ticker would.
type ticker struct {
	clock    *skewClock
	interval time.Duration
	ticked   int64
}

func (t *ticker) due() int {
	want := int64(t.clock.elapsed() / t.interval)
	if want <= t.ticked {
		return 0
	}
	n := want - t.ticked
	t.ticked = want
	const maxBurst = 1000 // a huge forward jump still ticks a bounded amount at once
	return int(min(n, maxBurst))
}
