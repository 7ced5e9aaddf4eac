package nemesis

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/history/faultrec"
	"chaos/testbed/bedtest"
)

// Issue 41: a libc server (examples/systems/clockserver.py, described,
// started with no fake clock) observes the bump the clock family makes
// through the vdso patch, measured against this machine's clock, and the
// clock op records the clock it showed; a kill
// and restart under the fault gives the new process the fault again; the
// reset puts the true clock back.
func TestVDSOSkewObservedByLibcServerAndReappliedAfterARestart(t *testing.T) {
	needFaketime(t) // the same needs: python3 (and a machine whose tests may start servers)
	ctx := context.Background()
	bin := bedtest.BuildChaos(t)
	c := startClockserver(t, "127.0.0.62", false)
	d, n := c.DB, c.Nodes[0]
	c.VDSOClock = &VDSOClock{HostBinary: HostBinary{Binary: bin, Path: bin}}
	addr := d.ClientAddr(n)
	awaitSkew(ctx, t, addr, 0)

	k := &Clock{Strategy: ClockVDSO, Targets: []Target{TargetAll}, Election: 500 * time.Millisecond}
	require.NoError(t, k.Available(ctx, c))
	op, err := k.Start(ctx, c, seeded(seedFor(t, k, c, clockBump)))
	require.NoError(t, err)
	v := op.Value.(faultrec.Clock)
	require.Equal(t, EffectObserved, v.Effect)
	bump := time.Duration(v.OffsetsMS[n.Name]) * time.Millisecond
	t.Logf("bump %v: observed %v", bump, awaitSkew(ctx, t, addr, bump))
	// The op records what the server itself showed at /clock (its
	// description's clock probe), beside what its data page reads back.
	shown := v.Shown[n.Name].SystemMS
	require.NotNil(t, shown, "the clock op records the clock clockserver shows")
	require.InDelta(t, float64(bump.Milliseconds()), *shown, 50, "what clockserver showed, in ms")

	kill := &Kill{Targets: []Target{TargetAll}}
	_, err = kill.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	_, err = kill.Stop(ctx, c)
	require.NoError(t, err)
	t.Logf("restarted: observed %v", awaitSkew(ctx, t, addr, bump))

	_, err = k.Stop(ctx, c)
	require.NoError(t, err)
	awaitSkew(ctx, t, addr, 0)
}
