package vdsoclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 41: a heal never moves a monotonic clock back. Drain slows the
// clocks of a process whose monotonic clocks read ahead until they have
// given it back, its readings rising all the while; the heal after it
// leaves them at or past where they were.
func TestDrainGivesBackTheMonotonicLeadBeforeTheHeal(t *testing.T) {
	c := startGoChild(t)
	pid := c.cmd.Process.Pid
	_, err := Patch(pid, Skew{Monotonic: 400 * time.Millisecond})
	require.NoError(t, err)

	d, err := Drain(pid)
	require.NoError(t, err)
	assert.InDelta(t, float64(800*time.Millisecond), float64(d), float64(20*time.Millisecond), "400 ms given back at half speed")
	p, err := Inspect(pid)
	require.NoError(t, err)
	assert.InDelta(t, DrainRate, p.Page.Rate(), 1e-9)

	_, last := c.read(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, mono := c.read(t)
		require.GreaterOrEqual(t, mono, last, "a draining monotonic clock never reads back")
		last = mono
		p, err := Inspect(pid)
		require.NoError(t, err)
		if _, ahead := p.Offsets(); ahead <= 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "still ahead after 10 s")
	}
	_, err = Heal(pid)
	require.NoError(t, err)
	_, mono := c.read(t)
	assert.GreaterOrEqual(t, mono, last, "the heal after the drain moves the monotonic clock forward, if at all")

	d, err = Drain(pid)
	require.NoError(t, err)
	assert.Zero(t, d, "a process not patched has nothing to drain")
}

// A process whose monotonic clocks are not ahead (behind, or on time) has
// nothing to drain, and its page is left as it is.
func TestDrainLeavesAClockThatIsNotAhead(t *testing.T) {
	c := startGoChild(t)
	pid := c.cmd.Process.Pid
	_, err := Patch(pid, Skew{Realtime: time.Second, Rate: 0.5, MaxLead: time.Second})
	require.NoError(t, err)
	d, err := Drain(pid)
	require.NoError(t, err)
	assert.Zero(t, d)
	p, err := Inspect(pid)
	require.NoError(t, err)
	assert.InDelta(t, 0.5, p.Page.Rate(), 1e-9)
	rt, _ := p.Offsets()
	assert.Greater(t, rt, 900*time.Millisecond, "the realtime offset is the fault's still")
}
