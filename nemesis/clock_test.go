package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/internal/golden"
)

// hookNode answers the clock hooks as chaos-node does (offsets add up, a
// rate > 0 replaces the rate, DELETE resets both) and records requests.
type hookNode struct {
	srv    *httptest.Server
	mu     sync.Mutex
	offset int64
	rate   float64
	reqs   []string
	status int  // non-zero: answer every request with this error status
	ignore bool // answer without changing the clock
}

func newHookNode(t *testing.T) *hookNode {
	h := &hookNode{rate: 1}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookNode) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var body struct {
		OffsetMS int64   `json:"offset_ms"`
		Rate     float64 `json:"rate"`
	}
	line := r.Method + " " + r.URL.Path
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, `{"error":"malformed"}`, http.StatusBadRequest)
			return
		}
		line += fmt.Sprintf(" offset_ms=%d rate=%v", body.OffsetMS, body.Rate)
	}
	h.reqs = append(h.reqs, line)
	if h.status != 0 {
		w.WriteHeader(h.status)
		fmt.Fprintf(w, `{"error":"hook says %d"}`, h.status)
		return
	}
	switch {
	case h.ignore:
	case r.Method == http.MethodDelete:
		h.offset, h.rate = 0, 1
	case body.Rate > 0:
		h.rate = body.Rate
		h.offset += body.OffsetMS
	default:
		h.offset += body.OffsetMS
	}
	fmt.Fprintf(w, `{"drop":[],"net":{},"clock":{"offset_ms":%d,"rate":%v}}`, h.offset, h.rate)
}

func (h *hookNode) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.reqs
	h.reqs = nil
	return out
}

// hookCluster is a cluster whose every node answers hooks on a hookNode.
func hookCluster(t *testing.T, nodes []db.Node) (*Cluster, map[string]*hookNode) {
	addrs := map[string]string{}
	c := &Cluster{Nodes: nodes, Hooks: &db.ChaosNodeHooks{Addrs: addrs}, Remotes: map[string]control.Remote{},
		Timing: db.Timing{Heartbeat: 50 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond}} // chaos-node's
	hooks := map[string]*hookNode{}
	for _, n := range nodes {
		hooks[n.Name] = newHookNode(t)
		addrs[n.Name] = strings.TrimPrefix(hooks[n.Name].srv.URL, "http://")
	}
	return c, hooks
}

// waitLog is a Clock.Wait that returns at once and records what it was
// asked to wait.
type waitLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (w *waitLog) wait(_ context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits = append(w.waits, d)
	return nil
}

func (w *waitLog) take() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.waits
	w.waits = nil
	return out
}

// seedFor returns the first seed with which k.Start on c draws a fault of
// kind: the draws of Start, in its order.
func seedFor(t *testing.T, k *Clock, c *Cluster, kind string) uint64 {
	t.Helper()
	for seed := range uint64(100) {
		rng := seeded(seed)
		mode := pickTarget(k.Targets, rng)
		nodes, err := SelectNodes(context.Background(), c, mode, rng)
		require.NoError(t, err)
		if v := k.plan(nodes, mode, rng); v.Kind == kind {
			return seed
		}
	}
	t.Fatalf("no seed below 100 plans a %s", kind)
	return 0
}

// Bumps, strobes and rate skew through the hooks, and the resets that end
// them: the requests each node gets and the ops recorded.
func TestClockHookRequests(t *testing.T) {
	ctx := context.Background()
	c, hooks := hookCluster(t, fiveNodes)
	waits := &waitLog{}
	var b strings.Builder
	for _, kind := range []string{clockBump, clockStrobe, clockRate} {
		k := &Clock{Targets: []Target{TargetMinority}, Wait: waits.wait}
		if kind == clockStrobe {
			k.Targets = []Target{TargetOne} // one node: its waits are in order
		}
		for _, step := range []func() (Op, error){
			func() (Op, error) { return k.Start(ctx, c, seeded(seedFor(t, k, c, kind))) },
			func() (Op, error) { return k.Stop(ctx, c) },
		} {
			op, err := step()
			require.NoError(t, err)
			b.WriteString(opLine(t, op) + "\n")
			for _, n := range fiveNodes {
				for _, r := range hooks[n.Name].take() {
					fmt.Fprintf(&b, "  %s: %s\n", n.Name, r)
				}
			}
			if w := waits.take(); len(w) > 0 {
				fmt.Fprintf(&b, "  waits %v\n", w)
			}
		}
	}
	golden.Equal(t, "testdata/clock-hook.golden", b.String())
}

// A node whose hook answers with an unchanged clock makes the fault "not
// observed" and is named.
func TestClockHookEffectNotObserved(t *testing.T) {
	c, hooks := hookCluster(t, fiveNodes)
	hooks["n2"].ignore = true
	k := &Clock{Targets: []Target{TargetAll}, Wait: (&waitLog{}).wait}
	op, err := k.Start(context.Background(), c, seeded(seedFor(t, k, c, clockRate)))
	require.NoError(t, err)
	v := op.Value.(faultrec.Clock)
	assert.Equal(t, EffectNotObserved, v.Effect)
	assert.Equal(t, []string{"n2"}, v.Unchanged)
}

// A hook that refuses names the node, the request and the fault; the
// targets stay recorded, so that Stop resets them.
func TestClockHookError(t *testing.T) {
	ctx := context.Background()
	c, hooks := hookCluster(t, fiveNodes[:2])
	hooks["n2"].status = http.StatusForbidden
	k := &Clock{Targets: []Target{TargetAll}, Wait: (&waitLog{}).wait}
	op, err := k.Start(ctx, c, seeded(seedFor(t, k, c, clockBump)))
	require.EqualError(t, err, "clock: n2: POST /faults/clock: status 403: hook says 403")
	assert.Equal(t, "clock-bump", op.F)
	hooks["n2"].status = 0
	op, err = k.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, `op clock-reset {"nodes":["n1","n2"],"mechanism":"hook"}`, opLine(t, op))
}

// Heal resets every node with hooks. A node that does not run, or runs
// without hooks (403), has no skew: healed. Any other failure is an error
// naming the node; the other nodes are healed all the same.
func TestClockHookHeal(t *testing.T) {
	c, hooks := hookCluster(t, fiveNodes)
	hooks["n2"].status = http.StatusForbidden
	hooks["n3"].srv.Close() // connection refused
	hooks["n4"].status = http.StatusInternalServerError
	delete(hookAddrs(c), "n5")
	err := (&Clock{}).Heal(context.Background(), c)
	require.EqualError(t, err, "clock: n4: DELETE /faults/clock: status 500: hook says 500")
	for name, want := range map[string]int{"n1": 1, "n2": 1, "n3": 0, "n4": 1, "n5": 0} {
		assert.Len(t, hooks[name].take(), want, name)
	}
}

func TestClockAvailable(t *testing.T) {
	ctx := context.Background()
	c, _ := hookCluster(t, fiveNodes)
	require.NoError(t, (&Clock{}).Available(ctx, c))
	delete(hookAddrs(c), "n3")
	assert.EqualError(t, (&Clock{}).Available(ctx, c),
		"clock: "+errNoHooks.Error())

	g, _, _ := goldenCluster(fiveNodes)
	require.NoError(t, (&Clock{Strategy: ClockSystem}).Available(ctx, g))
	g.SharedClock = true
	assert.EqualError(t, (&Clock{Strategy: ClockSystem}).Available(ctx, g), "clock: "+errSharedClock.Error())
	assert.EqualError(t, (&Clock{Strategy: "ntp"}).Available(ctx, g), `clock: unknown strategy "ntp" (want hook, vdso, faketime or system)`)
}

// The system strategy never runs a command on hosts that share the
// controller's clock: Start, Stop and Heal all refuse.
func TestClockSystemRefusedOnSharedClock(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := goldenCluster(fiveNodes)
	c.SharedClock = true
	k := &Clock{Strategy: ClockSystem}
	_, err := k.Start(ctx, c, seeded(1))
	assert.ErrorIs(t, err, errSharedClock)
	_, err = k.Stop(ctx, c)
	assert.ErrorIs(t, err, errSharedClock)
	assert.ErrorIs(t, k.Heal(ctx, c), errSharedClock)
	assert.ErrorIs(t, HealAll(ctx, c, []Fault{k}), errSharedClock)
	for _, f := range fakes {
		assert.Empty(t, f.Take())
	}
}

// The system strategy's commands: NTP off and date -s for a bump and a
// strobe, then the reset from the controller's clock, and a heal.
func TestClockSystemCommands(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := goldenCluster(fiveNodes)
	waits := &waitLog{}
	now := time.Date(2026, 11, 22, 1, 0, 0, 250_000_000, time.UTC)
	var b strings.Builder
	for _, kind := range []string{clockBump, clockStrobe} {
		k := &Clock{Strategy: ClockSystem, Targets: []Target{TargetOne}, Election: 300 * time.Millisecond,
			Now: func() time.Time { return now }, Wait: waits.wait, StateDir: "/var/lib/chaos"}
		for _, step := range []func() (Op, error){
			func() (Op, error) { return k.Start(ctx, c, seeded(seedFor(t, k, c, kind))) },
			func() (Op, error) { return k.Stop(ctx, c) },
		} {
			op, err := step()
			require.NoError(t, err)
			b.WriteString(transcript(opLine(t, op), fiveNodes, fakes))
			if w := waits.take(); len(w) > 0 {
				fmt.Fprintf(&b, "  waits %v\n", w)
			}
		}
		require.NoError(t, k.Heal(ctx, c))
		b.WriteString(transcript("heal", fiveNodes, fakes))
	}
	golden.Equal(t, "testdata/clock-system.golden", b.String())
}

// The draws stay in their documented ranges, and the system strategy
// never draws a rate.
func TestClockPlanRanges(t *testing.T) {
	for _, strategy := range []ClockStrategy{ClockHook, ClockSystem} {
		k := &Clock{Strategy: strategy, Election: 400 * time.Millisecond}
		kinds := map[string]bool{}
		for seed := range uint64(300) {
			v := k.plan(fiveNodes, TargetAll, rand.New(rand.NewPCG(seed, 7)))
			kinds[v.Kind] = true
			for _, off := range v.OffsetsMS {
				assert.True(t, abs(off) >= 100 && abs(off) <= 800, "offset %d", off)
			}
			if v.Kind == clockStrobe {
				assert.True(t, abs(v.DeltaMS) >= 100 && abs(v.DeltaMS) <= 800, "delta %d", v.DeltaMS)
				assert.True(t, v.Count >= 3 && v.Count <= 8, "count %d", v.Count)
				assert.True(t, v.PeriodMS >= 10 && v.PeriodMS <= 100, "period %d", v.PeriodMS)
			}
			for _, r := range v.Rates {
				assert.True(t, r >= 0.5 && r <= 2, "rate %v", r)
			}
		}
		want := map[string]bool{clockBump: true, clockStrobe: true, clockRate: strategy == ClockHook}
		if strategy == ClockSystem {
			delete(want, clockRate)
		}
		assert.Equal(t, want, kinds, strategy)
	}
}

func abs(x int64) int64 { return max(x, -x) }

// pathRemote runs commands locally with dir first on PATH, so that the
// fake timedatectl, systemctl and date there stand in for the real ones.
type pathRemote struct {
	control.Remote
	dir string
}

func (r pathRemote) Run(ctx context.Context, cmd string) (control.Result, error) {
	return r.Remote.Run(ctx, "PATH="+control.ShellQuote(r.dir)+":$PATH; export PATH; "+cmd)
}

// fakeTimeTools writes timedatectl, systemctl and date scripts into dir
// that log their arguments to dir/log: timedatectl reports NTP on, and
// chrony is the only active service.
func fakeTimeTools(t *testing.T, dir string) {
	t.Helper()
	log := control.ShellQuote(filepath.Join(dir, "log"))
	scripts := map[string]string{
		"timedatectl": `if [ "$1" = show ]; then echo yes; exit 0; fi; echo "timedatectl $*" >> ` + log,
		"systemctl":   `if [ "$1" = is-active ]; then [ "$3" = chrony ]; exit; fi; echo "systemctl $*" >> ` + log,
		"date":        `echo "date $*" >> ` + log,
	}
	for name, body := range scripts {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
}

// The system strategy's scripts, run by a real shell against fake tools:
// a bump notes and stops what synchronizes time, the reset sets the clock
// and starts exactly that again, and a later heal finds nothing to do.
func TestClockSystemScriptsAgainstFakeTools(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fakeTimeTools(t, dir)
	state := filepath.Join(dir, "state")
	n := fiveNodes[0]
	c := &Cluster{Nodes: []db.Node{n}, Remotes: map[string]control.Remote{n.Name: pathRemote{control.NewLocal(n.Name), dir}}}
	now := time.Unix(1795309200, 0)
	k := &Clock{Strategy: ClockSystem, Targets: []Target{TargetOne}, Now: func() time.Time { return now },
		Wait: (&waitLog{}).wait, StateDir: state}
	readLog := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "log"))
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "log")))
		return string(b)
	}

	op, err := k.Start(ctx, c, seeded(seedFor(t, k, c, clockBump)))
	require.NoError(t, err)
	off := op.Value.(faultrec.Clock).OffsetsMS[n.Name]
	at := now.Add(time.Duration(off) * time.Millisecond)
	assert.Equal(t, fmt.Sprintf("timedatectl set-ntp false\nsystemctl stop chrony\ndate -s @%d.%09d\n", at.Unix(), at.Nanosecond()), readLog())
	marker, err := os.ReadFile(filepath.Join(state, "clock-ntp-stopped"))
	require.NoError(t, err)
	assert.Equal(t, "timedatectl\nchrony\n", string(marker))

	_, err = k.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, "date -s @1795309200.000000000\ntimedatectl set-ntp true\nsystemctl start chrony\n", readLog())
	assert.NoFileExists(t, filepath.Join(state, "clock-ntp-stopped"))

	require.NoError(t, k.Heal(ctx, c))
	assert.Empty(t, readLog(), "nothing to heal once reset")
}

// Stop on a node that no longer runs (killed meanwhile) succeeds: its skew
// died with its process.
func TestClockStopOnANodeThatIsDown(t *testing.T) {
	ctx := context.Background()
	c, hooks := hookCluster(t, fiveNodes[:2])
	k := &Clock{Targets: []Target{TargetAll}, Wait: (&waitLog{}).wait}
	_, err := k.Start(ctx, c, seeded(seedFor(t, k, c, clockBump)))
	require.NoError(t, err)
	hooks["n1"].srv.Close()
	op, err := k.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, "clock-reset", op.F)
	assert.Equal(t, []string{"POST /faults/clock", "DELETE /faults/clock"}, stripBodies(hooks["n2"].take()))
}

func stripBodies(reqs []string) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i], _, _ = strings.Cut(r, " offset_ms")
	}
	return out
}

// A bump's offsets scale with the system's election timeout: up to twice
// it, so a slower system's leases and elections are reached too.
func TestClockOffsetsScaleWithTheSystemsElectionTimeout(t *testing.T) {
	ctx := context.Background()
	for _, election := range []time.Duration{500 * time.Millisecond, 3 * time.Second} {
		c, _ := hookCluster(t, fiveNodes)
		c.Timing.ElectionTimeout = election
		largest := int64(0)
		for seed := range uint64(40) {
			k := &Clock{Targets: []Target{TargetAll}, Wait: (&waitLog{}).wait}
			op, err := k.Start(ctx, c, seeded(seed))
			require.NoError(t, err)
			v := op.Value.(faultrec.Clock)
			for _, ms := range v.OffsetsMS {
				largest = max(largest, ms, -ms)
			}
			_, err = k.Stop(ctx, c)
			require.NoError(t, err)
		}
		assert.LessOrEqual(t, largest, 2*election.Milliseconds(), "election timeout %v", election)
		assert.Greater(t, largest, election.Milliseconds(), "election timeout %v: some offset beyond it", election)
	}
}
