package faultproxy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newTestShaper(seed uint64) *Shaper { return NewShaper(rand.New(rand.NewPCG(seed, 0))) }

// A delay holds every chunk back by exactly that much when nothing else
// is queued; no behavior forwards at once.
func TestShaperDelay(t *testing.T) {
	s := newTestShaper(1)
	b := Behavior{DelayMS: 75}
	assert.Equal(t, []Piece{{N: 10, At: t0.Add(75 * time.Millisecond)}}, s.Schedule(t0, 10, b))
	at := t0.Add(time.Second)
	assert.Equal(t, []Piece{{N: 3, At: at.Add(75 * time.Millisecond)}}, s.Schedule(at, 3, b))
	assert.Equal(t, []Piece{{N: 5, At: at.Add(2 * time.Second)}}, s.Schedule(at.Add(2*time.Second), 5, Behavior{}))
	assert.Empty(t, s.Schedule(at.Add(3*time.Second), 0, b))
}

// Jitter draws each chunk's extra delay in [0, jitter), but a chunk never
// overtakes the one before it: the releases never go back in time, and
// none comes before its own arrival plus the delay.
func TestShaperJitterKeepsOrder(t *testing.T) {
	s := newTestShaper(7)
	b := Behavior{DelayMS: 20, JitterMS: 60}
	var last time.Time
	held := 0
	for i := range 1000 {
		arrival := t0.Add(time.Duration(i) * time.Millisecond)
		ps := s.Schedule(arrival, 100, b)
		require.Len(t, ps, 1)
		at := ps[0].At
		require.False(t, at.Before(last), "chunk %d released at %v, before chunk %d at %v", i, at, i-1, last)
		require.False(t, at.Before(arrival.Add(20*time.Millisecond)), "chunk %d released before its delay", i)
		if at.Equal(last) {
			held++ // waited for the chunk before it
		} else {
			require.True(t, at.Before(arrival.Add(80*time.Millisecond)), "chunk %d: jitter beyond 60 ms", i)
		}
		last = at
	}
	// Chunks a millisecond apart with 60 ms of jitter: many wait behind
	// an earlier chunk's longer draw. A shaper that let them overtake
	// would fail the order check above instead.
	assert.Greater(t, held, 100)
}

// A rate caps the bytes released over every window at the rate times the
// window plus the bucket's depth, and a long stream drains at the rate.
func TestShaperRateCapsBandwidth(t *testing.T) {
	s := newTestShaper(1)
	b := Behavior{RateKbit: 800} // 100 000 bytes/s; bucket 2000 bytes
	var pieces []Piece
	for i := range 100 {
		ps := s.Schedule(t0.Add(time.Duration(i)*time.Millisecond), 10_000, b)
		for _, p := range ps {
			require.LessOrEqual(t, p.N, 2000)
		}
		pieces = append(pieces, ps...)
	}
	// 1 000 000 bytes at 100 000 bytes/s: the last leaves after ~10 s.
	end := pieces[len(pieces)-1].At.Sub(t0)
	assert.InDelta(t, 10*time.Second, end, float64(50*time.Millisecond))
	for _, window := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second} {
		for i, p := range pieces {
			sum := 0
			for _, q := range pieces[i:] {
				if q.At.Sub(p.At) >= window {
					break
				}
				sum += q.N
			}
			require.LessOrEqual(t, float64(sum), 100_000*window.Seconds()+2000, "window %v from piece %d", window, i)
		}
	}
}

// Delay and rate together: a chunk waits for its delay, then for its
// tokens; turning the rate off later keeps the order.
func TestShaperDelayThenRate(t *testing.T) {
	s := newTestShaper(1)
	b := Behavior{DelayMS: 100, RateKbit: 120} // 15 000 bytes/s; bucket 1500
	ps := s.Schedule(t0, 3000, b)
	require.Len(t, ps, 2)
	assert.Equal(t, t0.Add(100*time.Millisecond), ps[0].At)
	assert.Equal(t, t0.Add(200*time.Millisecond), ps[1].At) // 1500 more bytes at 15 000/s
	next := s.Schedule(t0.Add(time.Millisecond), 10, Behavior{})
	assert.Equal(t, []Piece{{N: 10, At: ps[1].At}}, next)
}

func TestBehaviorValidate(t *testing.T) {
	require.NoError(t, Behavior{DelayMS: 1, JitterMS: 2, RateKbit: 3}.Validate())
	require.EqualError(t, Behavior{DelayMS: 60_000, JitterMS: 1}.Validate(), "delay 60000 ms plus jitter 1 ms outside [0, 60000] ms")
	require.EqualError(t, Behavior{DelayMS: -1}.Validate(), "delay -1 ms plus jitter 0 ms outside [0, 60000] ms")
	require.EqualError(t, Behavior{RateKbit: -1}.Validate(), "negative rate -1 kbit/s")
}
