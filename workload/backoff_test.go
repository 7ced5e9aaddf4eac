package workload

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// sleepRecorder stands in for a Backoff's timer: it records each wait and
// returns at once.
type sleepRecorder struct{ waits []time.Duration }

func (s *sleepRecorder) sleep(_ context.Context, d time.Duration) { s.waits = append(s.waits, d) }

func newTestBackoff(seed uint64) (*Backoff, *sleepRecorder) {
	s := &sleepRecorder{}
	return NewBackoff(rand.New(rand.NewPCG(seed, 0)), s.sleep), s
}

// The ceiling doubles from BackoffMin to BackoffMax and stays there; each
// wait lies in [ceiling/2, ceiling].
func TestBackoffGrowsToItsCapWithJitter(t *testing.T) {
	ceilings := []time.Duration{10, 20, 40, 80, 160, 200, 200, 200, 200, 200}
	for seed := range uint64(50) {
		b, _ := newTestBackoff(seed)
		for i, c := range ceilings {
			c *= time.Millisecond
			d := b.Next()
			require.GreaterOrEqual(t, d, c/2, "seed %d, wait %d", seed, i)
			require.LessOrEqual(t, d, c, "seed %d, wait %d", seed, i)
		}
	}
}

// The jitter spreads waits over the interval rather than picking one value.
func TestBackoffJitterSpreads(t *testing.T) {
	b, _ := newTestBackoff(1)
	seen := map[time.Duration]bool{}
	for range 100 {
		seen[b.Next()] = true
		b.Reset()
	}
	assert.Greater(t, len(seen), 50, "100 first waits, drawn from [5ms, 10ms]")
}

func TestBackoffIsDeterministicUnderASeed(t *testing.T) {
	a, _ := newTestBackoff(9)
	b, _ := newTestBackoff(9)
	for range 20 {
		require.Equal(t, a.Next(), b.Next())
	}
}

// After waits only on Unavailable, resets the ceiling on OK, and leaves it
// alone on any other outcome.
func TestBackoffAfterOutcomes(t *testing.T) {
	b, s := newTestBackoff(3)
	ctx := t.Context()
	unavailable := history.Outcome{Type: history.Fail, Unavailable: true}
	for range 5 {
		b.After(ctx, unavailable)
	}
	require.Len(t, s.waits, 5)
	assert.Greater(t, s.waits[4], 80*time.Millisecond, "the fifth wait in a row has a ceiling of 160 ms")

	b.After(ctx, history.Outcome{Type: history.Fail, Error: "cas mismatch"})
	b.After(ctx, history.Outcome{Type: history.Info, Error: "timed out"})
	require.Len(t, s.waits, 5, "the node took those requests: no wait")
	b.After(ctx, unavailable)
	assert.Greater(t, s.waits[5], 100*time.Millisecond, "a fail or an info does not reset the ceiling (200 ms)")

	b.After(ctx, history.Outcome{Type: history.OK})
	require.Len(t, s.waits, 6, "no wait after a success")
	b.After(ctx, unavailable)
	assert.LessOrEqual(t, s.waits[6], BackoffMin, "a success resets the ceiling")
}

// The default wait ends when the context does.
func TestBackoffDefaultWaitHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b := NewBackoff(rand.New(rand.NewPCG(1, 1)), nil)
	b.After(ctx, history.Outcome{Unavailable: true}) // returns at once: the context has ended
}
