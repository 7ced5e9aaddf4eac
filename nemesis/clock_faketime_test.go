package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/history"
	"chaos/internal/fakeclock"
)

// fakeClockDB is a system whose nodes run under fake clocks whose control
// files are in dir on this machine, read by mech; refused, when set, is
// every node's FakeClock error. Other db.DB methods are not expected.
type fakeClockDB struct {
	db.DB
	dir     string
	mech    string
	refused error
}

func (d *fakeClockDB) Name() string               { return "fakesys" }
func (d *fakeClockDB) ClockFile(n db.Node) string { return filepath.Join(d.dir, n.Name+".rc") }
func (d *fakeClockDB) FakeClock(_ context.Context, _ control.Remote, n db.Node) (db.FakeClock, error) {
	if d.refused != nil {
		return db.FakeClock{}, d.refused
	}
	return db.FakeClock{File: d.ClockFile(n), Mechanism: d.mech, Lib: "/lib/libfaketime.so.1"}, nil
}

// fakeClockCluster is three nodes whose control files hold the true
// clock, started at started (libfaketime's) or without a start (native).
func fakeClockCluster(t *testing.T, mech string, started time.Time) (*Cluster, *fakeClockDB) {
	d := &fakeClockDB{dir: t.TempDir(), mech: mech}
	c := &Cluster{Nodes: fiveNodes[:3], DB: d, FakeClocks: d, SharedClock: true, Remotes: map[string]control.Remote{}}
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = control.NewLocal(n.Name)
		require.NoError(t, os.WriteFile(d.ClockFile(n), fakeclock.File{Started: started, Rate: 1}.Format(), 0o644))
	}
	return c, d
}

// specOf is the spec line of n's control file.
func specOf(t *testing.T, d *fakeClockDB, n string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, n+".rc"))
	require.NoError(t, err)
	f, err := fakeclock.Parse(b)
	require.NoError(t, err)
	return fakeclock.Spec{Offset: f.Offset, Rate: f.Rate}.String()
}

// Bumps, strobes and rates rewrite the targets' control files; Stop puts
// the true clock back, and the ops say the mechanism and who reads.
func TestClockFaketimeFiles(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{clockBump, clockStrobe, clockRate} {
		c, d := fakeClockCluster(t, fakeclock.Native, time.Time{})
		w := &waitLog{}
		k := &Clock{Strategy: ClockFaketime, Targets: []Target{TargetAll}, Election: 300 * time.Millisecond, Wait: w.wait}
		require.NoError(t, k.Available(ctx, c))
		op, err := k.Start(ctx, c, seeded(seedFor(t, k, c, kind)))
		require.NoError(t, err, kind)
		v := op.Value.(faultrec.Clock)
		assert.Equal(t, string(ClockFaketime), v.Mechanism)
		assert.Equal(t, map[string]string{"n1": "native", "n2": "native", "n3": "native"}, v.Readers)
		for _, n := range []string{"n1", "n2", "n3"} {
			want := map[string]fakeclock.Spec{
				clockBump:   {Offset: time.Duration(v.OffsetsMS[n]) * time.Millisecond, Rate: 1},
				clockStrobe: {Offset: strobeEnd(v), Rate: 1},
				clockRate:   {Rate: v.Rates[n]},
			}[kind]
			assert.Equal(t, want.String(), specOf(t, d, n), "%s on %s", kind, n)
		}
		if kind == clockStrobe {
			assert.Len(t, w.take(), 3*(v.Count-1), "the period between jumps, on each node")
		}
		op, err = k.Stop(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, history.FClockReset, op.F)
		for _, n := range []string{"n1", "n2", "n3"} {
			assert.Equal(t, "+0 x1", specOf(t, d, n))
		}
	}
}

// strobeEnd is where a strobe of v leaves the clock: +delta after an odd
// count of jumps, the true clock after an even one.
func strobeEnd(v faultrec.Clock) time.Duration {
	if v.Count%2 == 1 {
		return time.Duration(v.DeltaMS) * time.Millisecond
	}
	return 0
}

// For libfaketime a rate goes on from the clock at the change: the file's
// offset takes what the rate would bend since the node started, and the
// start line stays through the reset.
func TestClockFaketimeRateAnchorsLibfaketime(t *testing.T) {
	ctx := context.Background()
	started := time.Now().Add(-100 * time.Second)
	c, d := fakeClockCluster(t, fakeclock.Libfaketime, started)
	s := &sequence{}
	s.setup(LeaseFamily, 0)
	got, err := s.setFakeRate(ctx, c, "n2", 0.1)
	require.NoError(t, err)
	assert.Equal(t, 0.1, got)
	b, err := os.ReadFile(d.ClockFile(c.Nodes[1]))
	require.NoError(t, err)
	f, err := fakeclock.Parse(b)
	require.NoError(t, err)
	// Offset = 0.9 * (now - started), now being the host's clock at the
	// change: 90 s and a little.
	assert.InDelta(t, 90, f.Offset.Seconds(), 1)
	assert.True(t, f.Started.Equal(started.Round(0)) || f.Started.Sub(started).Abs() < time.Microsecond)
	require.NoError(t, s.undo(ctx, c, false))
	b, err = os.ReadFile(d.ClockFile(c.Nodes[1]))
	require.NoError(t, err)
	assert.Contains(t, string(b), "# started ")
	assert.Equal(t, "+0 x1", specOf(t, d, "n2"))
}

// Heal resets every control file that exists, and leftovers name the ones
// off the true clock.
func TestClockFaketimeHealAndLeftovers(t *testing.T) {
	ctx := context.Background()
	c, d := fakeClockCluster(t, fakeclock.Libfaketime, time.Unix(1700000000, 0))
	require.NoError(t, os.WriteFile(d.ClockFile(c.Nodes[0]), []byte("# started 1700000000.5\n+1.5 x0.5\n"), 0o644))
	require.NoError(t, os.Remove(d.ClockFile(c.Nodes[2])))
	k := &Clock{Strategy: ClockFaketime}
	left, err := k.leftovers(ctx, c, c.Nodes[0])
	require.NoError(t, err)
	assert.Equal(t, []string{"fake clock +1.5 x0.5 in " + d.ClockFile(c.Nodes[0])}, left)
	left, err = k.leftovers(ctx, c, c.Nodes[1])
	require.NoError(t, err)
	assert.Empty(t, left, "the true clock")

	require.NoError(t, k.Heal(ctx, c))
	b, err := os.ReadFile(d.ClockFile(c.Nodes[0]))
	require.NoError(t, err)
	assert.Equal(t, "# started 1700000000.5\n+0 x1\n", string(b))
	assert.NoFileExists(t, d.ClockFile(c.Nodes[2]), "no file, nothing made")

	// A run's setup (HealLeftovers, with the clock family's healers)
	// finds and resets it too.
	require.NoError(t, os.WriteFile(d.ClockFile(c.Nodes[1]), []byte("-2 x1\n"), 0o644))
	found, err := healNodeLeftovers(ctx, c, c.Nodes[1], clockHealers(true))
	require.NoError(t, err)
	assert.Equal(t, []string{"fake clock -2 x1 in " + d.ClockFile(c.Nodes[1])}, found)
	assert.Equal(t, "+0 x1", specOf(t, d, "n2"))
}

// The faketime strategy says why it cannot run: a system without fake
// clocks, a node whose program libfaketime cannot reach.
func TestClockFaketimeAvailable(t *testing.T) {
	ctx := context.Background()
	c, d := fakeClockCluster(t, fakeclock.Libfaketime, time.Unix(1700000000, 0))
	d.refused = errors.New("/usr/bin/etcd: statically linked: libfaketime cannot reach its clock")
	assert.EqualError(t, (&Clock{Strategy: ClockFaketime}).Available(ctx, c),
		"clock: faketime: n1: /usr/bin/etcd: statically linked: libfaketime cannot reach its clock")
	assert.EqualError(t, (&Lease{Clock: ClockFaketime}).Available(ctx, &Cluster{Nodes: c.Nodes, DB: d, FakeClocks: d, Remotes: c.Remotes,
		Leader: func(context.Context) (string, error) { return "n1", nil }}),
		"lease: clock: faketime: n1: /usr/bin/etcd: statically linked: libfaketime cannot reach its clock")
	c.DB, c.FakeClocks = noProcessDB{}, nil
	assert.EqualError(t, (&Clock{Strategy: ClockFaketime}).Available(ctx, c),
		"clock: the faketime strategy needs a system that can start its nodes under a fake clock (no FakeClocks capability)")
}

// Auto picks the hook where every node has one, else faketime where it
// works, and otherwise says why faketime cannot run on a system that
// fakes clocks.
func TestPickClockStrategy(t *testing.T) {
	ctx := context.Background()
	c, d := fakeClockCluster(t, fakeclock.Libfaketime, time.Unix(1700000000, 0))
	s, err := PickClockStrategy(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, ClockFaketime, s)
	d.refused = errors.New("etcd: a Go program")
	s, err = PickClockStrategy(ctx, c)
	assert.Equal(t, ClockFaketime, s)
	assert.EqualError(t, err, "clock: faketime: n1: etcd: a Go program")

	h, _ := hookCluster(t, fiveNodes[:3])
	s, err = PickClockStrategy(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, ClockHook, s)
}

// The clock of the leader, on a system that cannot tell its leader: one
// node's clock instead, and the op says why.
func TestClockOfTheLeaderWithoutLeaderCapability(t *testing.T) {
	ctx := context.Background()
	c, _ := fakeClockCluster(t, fakeclock.Native, time.Time{})
	c.Leader = nil
	k := &Clock{Strategy: ClockFaketime, Targets: []Target{TargetLeader}, Election: 300 * time.Millisecond, Wait: (&waitLog{}).wait}
	op, err := k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(faultrec.Clock)
	assert.Equal(t, string(TargetOne), v.Mode)
	assert.Len(t, v.Nodes, 1)
	assert.Contains(t, v.Fallback, "leader: ")
	assert.Contains(t, v.Fallback, "one node instead")
	_, err = k.Stop(ctx, c)
	require.NoError(t, err)
}
