package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeNow is a settable clock for skewClock.
type fakeNow struct{ t time.Time }

func (f *fakeNow) now() time.Time          { return f.t }
func (f *fakeNow) advance(d time.Duration) { f.t = f.t.Add(d) }
func newFakeTicker() (*fakeNow, *skewClock, *ticker) {
	f := &fakeNow{t: time.Unix(1000, 0)}
	c := newSkewClock(f.now)
	return f, c, &ticker{clock: c, interval: 100 * time.Millisecond}
}

func TestTickerFollowsRealTimeByDefault(t *testing.T) {
	f, _, tk := newFakeTicker()
	require.Equal(t, 0, tk.due())
	f.advance(250 * time.Millisecond)
	require.Equal(t, 2, tk.due())
	require.Equal(t, 0, tk.due(), "ticks are not owed twice")
	f.advance(50 * time.Millisecond)
	require.Equal(t, 1, tk.due())
}

func TestTickerRateSkew(t *testing.T) {
	f, c, tk := newFakeTicker()
	c.set(0.5, 0) // the node's clock runs at half speed
	f.advance(time.Second)
	require.Equal(t, 5, tk.due())
	c.set(2, 0)
	f.advance(time.Second)
	require.Equal(t, 20, tk.due())
	rate, off := c.state()
	require.Equal(t, 2.0, rate)
	require.Zero(t, off)
}

func TestTickerOffsetBumps(t *testing.T) {
	f, c, tk := newFakeTicker()
	c.set(0, 500*time.Millisecond) // jump forward: the ticks are owed at once
	require.Equal(t, 5, tk.due())
	c.set(0, -time.Second) // jump back: no ticks until virtual time catches up
	f.advance(400 * time.Millisecond)
	require.Equal(t, 0, tk.due())
	f.advance(700 * time.Millisecond)
	require.Equal(t, 1, tk.due())
	c.reset()
	rate, off := c.state()
	require.Equal(t, 1.0, rate)
	require.Zero(t, off)
}

func TestTickerBurstIsBounded(t *testing.T) {
	_, c, tk := newFakeTicker()
	c.set(0, time.Hour)
	require.Equal(t, 1000, tk.due())
}
