package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/db/described"
	"chaos/internal/fakeclock"
)

// needFaketime stops the test when this machine lacks what a node under
// libfaketime needs: under CI=true (test.sh installs both) it fails.
func needFaketime(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: starts a server under libfaketime")
	}
	lib, _ := filepath.Glob("/usr/lib/*/faketime/libfaketime.so.1")
	_, pyErr := os.Stat("/usr/bin/python3")
	if len(lib) > 0 && pyErr == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("libfaketime or /usr/bin/python3 is missing; test.sh installs them (apt-get install -y libfaketime python3)")
	}
	t.Skip("needs libfaketime and /usr/bin/python3 (apt-get install -y libfaketime python3)")
}

// serverSkew is how far the node's clock (its GET /clock) is from this
// machine's, measured at the middle of the request.
func serverSkew(ctx context.Context, addr string) (time.Duration, error) {
	var v struct {
		Now float64 `json:"now"`
	}
	before := time.Now()
	if err := bedGetJSON(ctx, "http://"+addr+"/clock", 2*time.Second, &v); err != nil {
		return 0, err
	}
	mid := before.Add(time.Since(before) / 2)
	served := time.Unix(0, int64(v.Now*1e9))
	return served.Sub(mid), nil
}

// awaitSkew polls until the node's skew is within 60 ms of want.
func awaitSkew(ctx context.Context, t *testing.T, addr string, want time.Duration) time.Duration {
	t.Helper()
	var got time.Duration
	require.Eventually(t, func() bool {
		s, err := serverSkew(ctx, addr)
		got = s
		return err == nil && (s-want).Abs() < 60*time.Millisecond
	}, bedDeadline, bedPoll, "the server's clock should be %v off this machine's; last %v", want, got)
	return got
}

// startClockserver starts examples/systems/clockserver.yaml's server as
// node n1 at addr on this machine, under a fake clock when faketime, and
// returns the nemesis's view of it; the server is stopped when the test
// ends.
func startClockserver(t *testing.T, addr string, faketime bool) *Cluster {
	t.Helper()
	ctx := context.Background()
	desc, err := described.Load(filepath.Join("..", "examples", "systems", "clockserver.yaml"))
	require.NoError(t, err)
	dir := t.TempDir()
	n := db.Node{Name: "n1", Addr: addr}
	d, err := described.New(desc, db.Config{Nodes: []db.Node{n}, Layout: db.Layout{BinDir: filepath.Join(dir, "bin"), DataDir: dir},
		Faketime: faketime})
	require.NoError(t, err)
	r := control.NewLocal(n.Name)
	require.NoError(t, d.Install(ctx, r, n))
	require.NoError(t, d.Start(ctx, r, n))
	t.Cleanup(func() { _ = d.Stop(context.Background(), r, n) })
	require.Eventually(t, func() bool { return d.Up(ctx, n) == nil }, bedDeadline, bedPoll)
	return NewCluster(d, []db.Node{n}, map[string]control.Remote{n.Name: r}, true)
}

// The test: a libc server (examples/systems/clockserver.py, a
// described system) started under libfaketime observes the skews the
// clock family and the lease family's rate set, measured against this
// machine's clock, and is back on the true clock after the reset.
func TestFaketimeSkewObservedByLibcServer(t *testing.T) {
	needFaketime(t)
	ctx := context.Background()
	c := startClockserver(t, "127.0.0.61", true)
	d, n, r := c.DB, c.Nodes[0], c.Remotes["n1"]
	fc, err := c.FakeClocks.FakeClock(ctx, r, n)
	require.NoError(t, err)
	assert.Equal(t, fakeclock.Libfaketime, fc.Mechanism, "python3 is a libc program")
	addr := d.ClientAddr(n)
	awaitSkew(ctx, t, addr, 0)

	// A bump by the clock family.
	k := &Clock{Strategy: ClockFaketime, Targets: []Target{TargetAll}, Election: 500 * time.Millisecond}
	require.NoError(t, k.Available(ctx, c))
	op, err := k.Start(ctx, c, seeded(seedFor(t, k, c, clockBump)))
	require.NoError(t, err)
	bump := time.Duration(op.Value.(faultrec.Clock).OffsetsMS[n.Name]) * time.Millisecond
	t.Logf("bump %v: observed %v", bump, awaitSkew(ctx, t, addr, bump))
	_, err = k.Stop(ctx, c)
	require.NoError(t, err)
	awaitSkew(ctx, t, addr, 0)

	// Half speed, as the lease family slows a leader, well after the
	// start: libfaketime would bend the whole time since then, a jump the
	// offset written with the rate takes back.
	time.Sleep(time.Second)
	s := (&Lease{Clock: ClockFaketime}).state()
	_, err = s.setFakeRate(ctx, c, n.Name, 0.5)
	require.NoError(t, err)
	first, err := serverSkew(ctx, addr)
	require.NoError(t, err)
	assert.Less(t, first.Abs(), 100*time.Millisecond, "no jump when the rate changes")
	began := time.Now()
	time.Sleep(time.Second)
	last, err := serverSkew(ctx, addr)
	require.NoError(t, err)
	real := time.Since(began)
	rate := float64(real+last-first) / float64(real)
	t.Logf("rate 0.5: skew %v, then %v after %v: observed rate %.2f", first, last, real, rate)
	assert.Less(t, math.Abs(rate-0.5), 0.1)

	// The heal puts the true clock back.
	require.NoError(t, s.heal(ctx, c))
	awaitSkew(ctx, t, addr, 0)
}
