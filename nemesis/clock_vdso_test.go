package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
	"chaos/nemesis/hostcmd"
)

// vdsoFakeTool is `chaos vdso-clock` as a python3 script: it logs its
// arguments, one call a line, to the file log and answers as the tool
// does, its process patched with what set asked (or not patched after a
// heal, and as last set for show).
const vdsoFakeTool = `#!/usr/bin/env python3
import json, re, sys
log, args = %q, sys.argv[1:]
open(log, "a").write(" ".join(args) + "\n")
def ns(d):
    total, sign = 0.0, -1 if d.startswith("-") else 1
    for num, unit in re.findall(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", d):
        total += float(num) * {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}[unit]
    return int(sign * total)
flag = lambda name: args[args.index(name) + 1]
line = {"pid": int(flag("--pid")), "patched": args[1] == "set", "realtime_offset_ns": 0, "monotonic_offset_ns": 0}
if args[1] == "set":
    line.update(realtime_offset_ns=ns(flag("--realtime")), monotonic_offset_ns=ns(flag("--monotonic")), rate=float(flag("--rate")))
print(json.dumps(line))
`

// vdsoFakeProcs names each node's process: pid 100 + its index, and its
// start record.
type vdsoFakeProcs struct{}

func (vdsoFakeProcs) Process(_ context.Context, _ control.Remote, n db.Node) (db.Process, error) {
	return db.Process{Pid: 100 + int(n.Name[1]-'0'), Record: "/var/lib/chaos/" + n.Name + ".started"}, nil
}

// vdsoCluster is three local nodes whose vdso tool is vdsoFakeTool, and
// the file it logs to.
func vdsoCluster(t *testing.T) (*Cluster, string) {
	t.Helper()
	dir := t.TempDir()
	log, tool := filepath.Join(dir, "calls"), filepath.Join(dir, "chaos")
	require.NoError(t, os.WriteFile(tool, []byte(fmt.Sprintf(vdsoFakeTool, log)), 0o755))
	c := &Cluster{Nodes: fiveNodes[:3], SharedClock: true, Processes: vdsoFakeProcs{}, Remotes: map[string]control.Remote{},
		VDSOClock: &VDSOClock{HostBinary: HostBinary{Binary: tool, Path: tool}}}
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = control.NewLocal(n.Name)
	}
	return c, log
}

// vdsoCalls are the calls the fake tool logged for pid, and forgets them.
func vdsoCalls(t *testing.T, log string, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(l, fmt.Sprintf("--pid %d ", pid)) {
			out = append(out, l)
		}
	}
	return out
}

func TestClockVDSOSetsEachProcessTreeAndHealsIt(t *testing.T) {
	needVDSOHost(t)
	ctx := context.Background()
	for _, kind := range []string{clockBump, clockStrobe, clockRate} {
		c, log := vdsoCluster(t)
		w := &waitLog{}
		k := &Clock{Strategy: ClockVDSO, Targets: []Target{TargetAll}, Election: 300 * time.Millisecond, Wait: w.wait}
		require.NoError(t, k.Available(ctx, c))
		op, err := k.Start(ctx, c, seeded(seedFor(t, k, c, kind)))
		require.NoError(t, err, kind)
		v := op.Value.(faultrec.Clock)
		assert.Equal(t, "vdso", v.Mechanism)
		assert.Equal(t, EffectObserved, v.Effect, kind)
		for i, n := range []string{"n1", "n2", "n3"} {
			pid := 101 + i
			calls := vdsoCalls(t, log, pid)
			var realtime, monotonic time.Duration
			var want []string
			for _, ms := range clockJumps(&v, n) {
				realtime += time.Duration(ms) * time.Millisecond
				monotonic = max(monotonic, realtime) // forward only
				want = append(want, fmt.Sprintf("vdso-clock set --pid %d --started /var/lib/chaos/%s.started --tree --realtime %v --monotonic %v --rate 1 --max-lead %v",
					pid, n, realtime, monotonic, max(600*time.Millisecond, realtime)))
			}
			if kind == clockRate {
				want = []string{fmt.Sprintf("vdso-clock set --pid %d --started /var/lib/chaos/%s.started --tree --realtime 0s --monotonic 0s --rate %v --max-lead 600ms", pid, n, v.Rates[n])}
			}
			assert.Equal(t, want, calls, "%s on %s", kind, n)
			assert.Equal(t, pid, v.Shown[n].Pid)
			assert.InDelta(t, float64(realtime.Milliseconds()), v.Shown[n].RealtimeMS, 0.001)
		}
		require.NoError(t, os.Remove(log))
		_, err = k.Stop(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, []string{"vdso-clock heal --pid 101 --started /var/lib/chaos/n1.started --tree"}, vdsoCalls(t, log, 101))
	}
}

// A monotonic clock never goes back in a fault: it follows a strobe's
// first jump forward, and the way back moves the realtime clock alone.
func TestClockVDSOStrobeMovesTheMonotonicClockForwardOnly(t *testing.T) {
	needVDSOHost(t)
	c, log := vdsoCluster(t)
	k := &Clock{Strategy: ClockVDSO, Election: time.Second, Wait: (&waitLog{}).wait}
	v := faultrec.Clock{Nodes: []string{"n1"}, Mechanism: "vdso", Kind: clockStrobe, DeltaMS: 400, PeriodMS: 20, Count: 4}
	require.NoError(t, k.apply(context.Background(), c, c.Nodes[:1], &v))
	var monos []string
	for _, call := range vdsoCalls(t, log, 101) {
		f := strings.Fields(call)
		monos = append(monos, f[slices.Index(f, "--monotonic")+1])
	}
	assert.Equal(t, []string{"400ms", "400ms", "400ms", "400ms"}, monos, "up with the first jump, and no further: a strobe comes back")
}

func TestVDSOProbeError(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"x86_64\nnone\n0\n000001ffffffffff\n", ""},
		{"x86_64\n1\n1000\n0000000000080000\n", ""}, // a user with CAP_SYS_PTRACE
		{"aarch64\nnone\n0\n000001ffffffffff\n", "the host is aarch64: the vdso clock patches x86-64 programs only"},
		{"x86_64\n3\n0\n000001ffffffffff\n", "ptrace_scope is 3"},
		{"x86_64\n1\n1000\n0000000000000000\n", "user 1000 has no CAP_SYS_PTRACE"},
		{"x86_64\n", "want its architecture"},
	} {
		err := vdsoProbeError(c.out)
		if c.want == "" {
			assert.NoError(t, err, c.out)
		} else {
			assert.ErrorContains(t, err, c.want, c.out)
		}
	}
}

// Auto prefers the vdso patch to a fake clock, and falls back to the fake
// clock where the system cannot name its processes.
func TestPickClockStrategyPrefersVDSO(t *testing.T) {
	needVDSOHost(t)
	ctx := context.Background()
	c, _ := vdsoCluster(t)
	fc, _ := fakeClockCluster(t, "native", time.Time{})
	c.FakeClocks, c.DB = fc.FakeClocks, fc.DB
	s, err := PickClockStrategy(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, ClockVDSO, s)
	c.Processes = nil
	s, err = PickClockStrategy(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, ClockFaketime, s)
}

// A patch a run left shows in the heal's leftovers, and the heal removes
// it; a node whose process does not run has none.
func TestClockVDSOLeftoversAndHeal(t *testing.T) {
	needVDSOHost(t)
	ctx := context.Background()
	c, log := vdsoCluster(t)
	k := &Clock{Strategy: ClockVDSO}
	// The fake tool's show answers unpatched: nothing is left.
	left, err := k.leftovers(ctx, c, c.Nodes[0])
	require.NoError(t, err)
	assert.Empty(t, left)
	require.NoError(t, k.Heal(ctx, c))
	assert.Equal(t, []string{"vdso-clock heal --pid 102 --started /var/lib/chaos/n2.started --tree"}, vdsoCalls(t, log, 102))
}

// needVDSOHost skips the test on a machine whose probe the vdso strategy
// refuses (not x86-64, or no right to trace): the tests run the probe on
// this machine, through local remotes.
func needVDSOHost(t *testing.T) {
	t.Helper()
	out, err := control.Output(context.Background(), control.NewLocal("probe"), hostcmd.VDSOProbeCmd)
	require.NoError(t, err)
	if err := vdsoProbeError(string(out)); err != nil {
		t.Skipf("this machine cannot run the vdso strategy: %v", err)
	}
}

// shownClocks is a system that shows its nodes' clocks: each node's clock
// is the controller's plus its offset; a node without one does not
// answer.
type shownClocks struct {
	now     func() time.Time
	offsets map[string]time.Duration
}

func (s shownClocks) NodeClock(_ context.Context, n db.Node) (time.Time, error) {
	off, ok := s.offsets[n.Name]
	if !ok {
		return time.Time{}, errors.New("connection refused")
	}
	return s.now().Add(off), nil
}

// Issue 41: where the system shows its clock, a clock op records what it
// showed beside what the data page reads back; a node whose system does
// not answer shows nothing, and a system that cannot say adds nothing.
func TestClockVDSORecordsTheClockTheSystemShows(t *testing.T) {
	needVDSOHost(t)
	at := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return at }
	c, _ := vdsoCluster(t)
	c.Clocks = shownClocks{now: now, offsets: map[string]time.Duration{"n1": 1500 * time.Millisecond, "n2": -250*time.Millisecond - 40*time.Microsecond}}
	k := &Clock{Strategy: ClockVDSO, Election: time.Second, Wait: (&waitLog{}).wait, Now: now}
	v := faultrec.Clock{Nodes: []string{"n1", "n2", "n3"}, Mechanism: "vdso", Kind: clockBump,
		OffsetsMS: map[string]int64{"n1": 1500, "n2": -250, "n3": 700}}
	require.NoError(t, k.apply(context.Background(), c, c.Nodes, &v))
	assert.Equal(t, 1500.0, *v.Shown["n1"].SystemMS)
	assert.Equal(t, -250.0, *v.Shown["n2"].SystemMS, "to 0.1 ms")
	assert.Nil(t, v.Shown["n3"].SystemMS, "n3's system did not answer")
	b, err := json.Marshal(v.Shown["n1"])
	require.NoError(t, err)
	assert.JSONEq(t, `{"pid":101,"realtime_offset_ms":1500,"monotonic_offset_ms":1500,"rate":1,"system_offset_ms":1500}`, string(b))

	c.Clocks = nil
	v.Shown = nil
	require.NoError(t, k.apply(context.Background(), c, c.Nodes, &v))
	assert.Nil(t, v.Shown["n1"].SystemMS)
}
