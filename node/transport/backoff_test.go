package transport

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoffDoublesToTheCapAndResets(t *testing.T) {
	b := newBackoff(10*time.Millisecond, time.Second, nil)
	var got []time.Duration
	for range 9 {
		got = append(got, b.next())
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second}, got)
	b.reset()
	require.Equal(t, 10*ms, b.next())
}

func TestBackoffJitterStaysInUpperHalf(t *testing.T) {
	b := newBackoff(10*time.Millisecond, time.Second, rand.New(rand.NewPCG(1, 1)))
	bound := 10 * time.Millisecond
	seen := map[time.Duration]bool{}
	for range 200 {
		d := b.next()
		require.GreaterOrEqual(t, d, bound/2)
		require.LessOrEqual(t, d, bound)
		seen[d] = true
		bound = min(2*bound, time.Second)
	}
	require.Greater(t, len(seen), 100, "jitter varies the waits")
}
