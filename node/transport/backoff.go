package transport

import (
	"math/rand/v2"
	"time"
)

// backoff is capped exponential backoff. Each next() returns a wait drawn
// from [b/2, b] for the current bound b and then doubles b up to max;
// reset() returns b to min. A nil rng gives the bound itself, unjittered.
type backoff struct {
	min, max time.Duration
	cur      time.Duration
	rng      *rand.Rand
}

func newBackoff(min, max time.Duration, rng *rand.Rand) backoff {
	return backoff{min: min, max: max, cur: min, rng: rng}
}

func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur = min(2*b.cur, b.max)
	if b.rng == nil || d < 2 {
		return d
	}
	half := d / 2
	return half + time.Duration(b.rng.Int64N(int64(d-half)+1))
}

func (b *backoff) reset() { b.cur = b.min }
