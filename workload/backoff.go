package workload

import (
	"context"
	"math/rand/v2"
	"time"

	"chaos/history"
	"chaos/internal/sleep"
)

// The bounds of a Backoff's wait.
const (
	// BackoffMin is the ceiling of the first wait after a success.
	BackoffMin = 10 * time.Millisecond
	// BackoffMax bounds every wait: a worker bound to a dead node still
	// tries it a few times a second, so the history shows when it is back.
	BackoffMax = 200 * time.Millisecond
)

// Backoff is the one policy every worker follows after its node did not
// take a request at all (history.Outcome.Unavailable: a refused
// connection, a "no leader" answer): wait before the next operation, as a
// reconnecting client would. Without it a worker bound to a killed or
// leaderless node spins, filling the history with thousands of failures a
// second that say nothing new.
//
// The waits grow: the n-th unavailable outcome in a row waits a uniformly
// random time in [c/2, c], where the ceiling c is BackoffMin doubled n-1
// times, at most BackoffMax. The jitter keeps the workers of one node from
// retrying in lockstep. An OK outcome resets the ceiling to BackoffMin;
// other outcomes (a cas mismatch, a timeout) leave it as it is and wait
// nothing, since the node took the request.
//
// A Backoff is used by one worker; it is not safe for concurrent use.
type Backoff struct {
	rng     *rand.Rand
	sleep   func(ctx context.Context, d time.Duration)
	ceiling time.Duration // of the next wait
}

// NewBackoff returns a Backoff drawing its jitter from rng and waiting
// with wait, which must return when ctx ends at the latest; nil means
// sleep.For, a timer. Tests pass a seeded rng and a wait that only records.
func NewBackoff(rng *rand.Rand, wait func(ctx context.Context, d time.Duration)) *Backoff {
	if wait == nil {
		wait = func(ctx context.Context, d time.Duration) { _ = sleep.For(ctx, d) }
	}
	return &Backoff{rng: rng, sleep: wait, ceiling: BackoffMin}
}

// After follows the policy for out, the outcome of the worker's last
// operation: it waits when out.Unavailable (returning early when ctx ends),
// resets on OK, and otherwise does nothing.
func (b *Backoff) After(ctx context.Context, out history.Outcome) {
	switch {
	case out.Unavailable:
		b.sleep(ctx, b.Next())
	case out.Type == history.OK:
		b.Reset()
	}
}

// Next returns the wait for one more unavailable outcome and grows the
// ceiling of the one after it.
func (b *Backoff) Next() time.Duration {
	c := b.ceiling
	b.ceiling = min(2*c, BackoffMax)
	half := c / 2
	return half + time.Duration(b.rng.Int64N(int64(c-half)+1))
}

// Reset brings the ceiling back to BackoffMin.
func (b *Backoff) Reset() { b.ceiling = BackoffMin }
