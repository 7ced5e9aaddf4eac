package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/testbed"
)

// Bounds of the end-to-end test's polling.
const (
	processBedPoll     = 50 * time.Millisecond
	processBedDeadline = 15 * time.Second
)

// processBedSystem skips (or, in CI, fails) when this machine cannot host
// a testbed: it needs root and the testbed's packages.
func processBedSystem(t *testing.T) testbed.System {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	sys := testbed.NewSystem()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root"
	} else if err := testbed.Platform(); err != nil {
		why = err.Error()
	} else if m := testbed.Missing(sys); len(m) > 0 {
		why = (&testbed.MissingError{Missing: m}).Error()
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testbed end-to-end test cannot run: %s", why)
		}
		t.Skip(why)
	}
	return sys
}

// processBedBinary builds the chaos binary once per test run.
var processBedBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "chaos-nemesis-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "chaos")
	if out, err := exec.Command("go", "build", "-o", bin, "chaos/cmd/chaos").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// bedStatus is chaos-node's GET /status.
type bedStatus struct {
	Role    string `json:"role"`
	Term    uint64 `json:"term"`
	Leader  string `json:"leader"`
	Applied uint64 `json:"applied"`
}

// bedGetJSON GETs url within timeout and decodes a 200 answer into v.
func bedGetJSON(ctx context.Context, url string, timeout time.Duration, v any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %s", url, resp.StatusCode, body)
	}
	return json.Unmarshal(body, v)
}

// bedLeader returns the node that reports itself leader, among nodes.
func bedLeader(ctx context.Context, d db.DB, nodes []db.Node) (string, error) {
	for _, n := range nodes {
		var st bedStatus
		if bedGetJSON(ctx, "http://"+d.ClientAddr(n)+"/status", 300*time.Millisecond, &st) == nil && st.Role == "leader" {
			return n.Name, nil
		}
	}
	return "", errors.New("no node reports itself leader")
}

// bedProcState reads the State line of the node's process on its host.
func bedProcState(ctx context.Context, t *testing.T, r control.Remote, n db.Node) string {
	pid := "/var/lib/chaos/chaos-node/" + n.Name + "/node.pid"
	out, err := control.Output(ctx, r, "grep '^State:' /proc/$(cat "+pid+")/status")
	require.NoError(t, err, n.Name)
	return strings.TrimSpace(string(out))
}

// Issue 6's end-to-end test on three testbed hosts over SSH: kill the
// leader (a new one is elected, the killed node's port is dead) and
// restart it (it catches up); pause a follower (silent within 1s) and
// resume it; skew clocks through the hook and pause a node, then HealAll,
// and later `chaos heal`, leave no stopped process and no clock skew.
func TestKillPauseClockOnTestbed(t *testing.T) {
	sys := processBedSystem(t)
	bin, err := processBedBinary()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	dir := filepath.Join(t.TempDir(), "tb")
	st, err := testbed.Up(ctx, sys, testbed.Config{Dir: dir, Hosts: 3, Subnet: "10.77.243.0/24"})
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = testbed.Down(context.Background(), sys, dir) })

	c := deployProcessBed(ctx, t, dir, st, bin)
	url := func(n db.Node, p string) string { return "http://" + c.DB.ClientAddr(n) + p }
	node := func(name string) db.Node {
		for _, n := range c.Nodes {
			if n.Name == name {
				return n
			}
		}
		t.Fatalf("no node %s", name)
		return db.Node{}
	}
	others := func(name string) []db.Node {
		var out []db.Node
		for _, n := range c.Nodes {
			if n.Name != name {
				out = append(out, n)
			}
		}
		return out
	}

	// Kill the leader: a survivor takes over, the killed port is dead.
	kill := &Kill{Targets: []Target{TargetLeader}}
	op, err := kill.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(processValue)
	require.Equal(t, EffectObserved, v.Effect, "%+v", v)
	old := node(v.Nodes[0])
	require.Eventually(t, func() bool {
		l, err := bedLeader(ctx, c.DB, others(old.Name))
		return err == nil && l != old.Name
	}, processBedDeadline, processBedPoll, "a new leader is elected")
	_, err = net.DialTimeout("tcp", c.DB.ClientAddr(old), time.Second)
	require.Error(t, err, "the killed node's client port is dead")
	survivor := others(old.Name)[0]
	require.Eventually(t, func() bool {
		return bedPut(url(survivor, "/kv/k"), `{"value":"after-kill"}`) == nil
	}, processBedDeadline, processBedPoll, "the survivors accept a write")

	// Restart it: it answers and catches up.
	op, err = kill.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, "start", op.F)
	require.Eventually(t, func() bool {
		var got struct{ Value string }
		return bedGetJSON(ctx, url(old, "/kv/k?stale=true"), time.Second, &got) == nil && got.Value == "after-kill"
	}, processBedDeadline, processBedPoll, "the restarted node catches up")

	// Pause a follower: silent within 1s; resume: answers again.
	leader, err := bedLeader(ctx, c.DB, c.Nodes)
	require.NoError(t, err)
	followers := *c
	followers.Nodes = others(leader)
	pause := &Pause{Targets: []Target{TargetOne}}
	op, err = pause.Start(ctx, &followers, seeded(2))
	require.NoError(t, err)
	paused := node(op.Value.(processValue).Nodes[0])
	assert.Equal(t, EffectObserved, op.Value.(processValue).Effect)
	var status bedStatus
	require.Error(t, bedGetJSON(ctx, url(paused, "/status"), time.Second, &status), "a paused node does not answer within 1s")
	assert.Contains(t, bedProcState(ctx, t, c.Remotes[paused.Name], paused), "stopped")
	_, err = pause.Stop(ctx, &followers)
	require.NoError(t, err)
	require.NoError(t, bedGetJSON(ctx, url(paused, "/status"), time.Second, &status), "resumed, it answers")

	// Faults left behind are healed by HealAll with fresh faults, as after
	// a controller crash, and then by the `chaos heal` command.
	leaveFaults(ctx, t, c, &followers)
	require.NoError(t, HealAll(ctx, c, []Fault{&Pause{}, &Kill{}, &Clock{}}))
	assertHealed(ctx, t, c)

	leaveFaults(ctx, t, c, &followers)
	out, err := exec.CommandContext(ctx, bin, "heal", "--nodes-file", filepath.Join(dir, testbed.NodesFile),
		"--ssh-private-key", filepath.Join(dir, testbed.KeyFile), "--known-hosts", filepath.Join(dir, testbed.KnownHostsFile)).CombinedOutput()
	require.NoError(t, err, "chaos heal: %s", out)
	for _, n := range c.Nodes {
		assert.Contains(t, string(out), fmt.Sprintf("%s (%s): healed\n", n.Name, n.Addr))
	}
	assertHealed(ctx, t, c)
}

// leaveFaults pauses one of followers' nodes, and through the hooks sets
// the first node's clock to rate 0.5 (GET /faults shows it) and bumps the
// second's.
func leaveFaults(ctx context.Context, t *testing.T, c, followers *Cluster) {
	t.Helper()
	clock := &Clock{}
	skewed, bumped := c.Nodes[0], c.Nodes[1]
	_, err := clock.hook(ctx, c, skewed, http.MethodPost, &hookClock{Rate: 0.5})
	require.NoError(t, err)
	_, err = clock.hook(ctx, c, bumped, http.MethodPost, &hookClock{OffsetMS: 700})
	require.NoError(t, err)
	var faults struct{ Clock hookClock }
	require.NoError(t, bedGetJSON(ctx, "http://"+c.DB.ClientAddr(skewed)+"/faults", time.Second, &faults))
	assert.Equal(t, hookClock{Rate: 0.5}, faults.Clock, "GET /faults shows the rate")
	op, err := (&Pause{Targets: []Target{TargetOne}}).Start(ctx, followers, seeded(3))
	require.NoError(t, err)
	n := op.Value.(processValue).Nodes[0]
	require.Contains(t, bedProcState(ctx, t, c.Remotes[n], db.Node{Name: n}), "stopped")
}

// assertHealed checks that no node's process is stopped and no clock is
// skewed.
func assertHealed(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		assert.NotContains(t, bedProcState(ctx, t, c.Remotes[n.Name], n), "stopped", n.Name)
		var faults struct{ Clock hookClock }
		require.NoError(t, bedGetJSON(ctx, "http://"+c.DB.ClientAddr(n)+"/faults", time.Second, &faults), n.Name)
		assert.Equal(t, hookClock{Rate: 1}, faults.Clock, "%s: no clock skew left", n.Name)
	}
}

// deployProcessBed dials the hosts of st and starts a chaos-node cluster
// with fault hooks on them; the nodes stop when the test ends.
func deployProcessBed(ctx context.Context, t *testing.T, dir string, st testbed.State, bin string) *Cluster {
	t.Helper()
	cfg := control.SSHConfig{KeyFiles: []string{filepath.Join(dir, testbed.KeyFile)},
		KnownHosts: filepath.Join(dir, testbed.KnownHostsFile)}
	dialer, err := control.NewSSHDialer(cfg)
	require.NoError(t, err)
	c := &Cluster{Remotes: map[string]control.Remote{}, HookAddrs: map[string]string{}, SharedClock: true}
	for _, h := range st.Hosts {
		r, err := dialer.Dial(ctx, h.Addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close() })
		c.Remotes[h.Name] = r
		c.Nodes = append(c.Nodes, db.Node{Name: h.Name, Addr: h.Addr})
	}
	d := &db.ChaosNode{Binary: bin, Upload: true, FaultHooks: true, Layout: db.DefaultLayout(), Nodes: c.Nodes,
		Heartbeat: 20 * time.Millisecond, Election: 200 * time.Millisecond}
	c.DB = d
	c.Leader = func(ctx context.Context) (string, error) { return bedLeader(ctx, d, c.Nodes) }
	for _, n := range c.Nodes {
		c.HookAddrs[n.Name] = d.ClientAddr(n)
		require.NoError(t, d.Install(ctx, c.Remotes[n.Name], n))
		require.NoError(t, d.Start(ctx, c.Remotes[n.Name], n))
		t.Cleanup(func() { _ = d.Stop(context.Background(), c.Remotes[n.Name], n) })
	}
	for _, n := range c.Nodes {
		require.NoError(t, d.Ready(ctx, n))
	}
	require.Eventually(t, func() bool {
		_, err := bedLeader(ctx, d, c.Nodes)
		return err == nil
	}, processBedDeadline, processBedPoll, "the cluster elects a leader")
	return c
}

// bedPut writes body to url and fails unless the answer is 200.
func bedPut(url, body string) error {
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: status %d", url, resp.StatusCode)
	}
	return nil
}
