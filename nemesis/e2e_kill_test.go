package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/testbed"
	"chaos/testbed/bedtest"
)

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
	sys := bedtest.Require(t)
	bin := bedtest.BuildChaos(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	dir := filepath.Join(t.TempDir(), "tb")
	st := bedtest.Up(ctx, t, sys, testbed.Config{Dir: dir, Hosts: 3, Subnet: "10.77.243.0/24"})

	c := bedDeploy(ctx, t, dir, st, bin, 20*time.Millisecond, 200*time.Millisecond)
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
	v := op.Value.(faultrec.Process)
	require.Equal(t, EffectObserved, v.Effect, "%+v", v)
	old := node(v.Nodes[0])
	require.Eventually(t, func() bool {
		l, err := bedLeader(ctx, c.DB, others(old.Name))
		return err == nil && l != old.Name
	}, bedDeadline, bedPoll, "a new leader is elected")
	_, err = net.DialTimeout("tcp", c.DB.ClientAddr(old), time.Second)
	require.Error(t, err, "the killed node's client port is dead")
	survivor := others(old.Name)[0]
	require.Eventually(t, func() bool {
		return bedPut(url(survivor, "/kv/k"), `{"value":"after-kill"}`) == nil
	}, bedDeadline, bedPoll, "the survivors accept a write")

	// Restart it: it answers and catches up.
	op, err = kill.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, "start", op.F)
	require.Eventually(t, func() bool {
		var got struct{ Value string }
		return bedGetJSON(ctx, url(old, "/kv/k?stale=true"), time.Second, &got) == nil && got.Value == "after-kill"
	}, bedDeadline, bedPoll, "the restarted node catches up")

	// Pause a follower: silent within 1s; resume: answers again.
	leader, err := bedLeader(ctx, c.DB, c.Nodes)
	require.NoError(t, err)
	followers := *c
	followers.Nodes = others(leader)
	pause := &Pause{Targets: []Target{TargetOne}}
	op, err = pause.Start(ctx, &followers, seeded(2))
	require.NoError(t, err)
	paused := node(op.Value.(faultrec.Process).Nodes[0])
	assert.Equal(t, EffectObserved, op.Value.(faultrec.Process).Effect)
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
	out, err := exec.CommandContext(ctx, bin, "heal", "--db", "chaos-node", "--nodes-file", filepath.Join(dir, testbed.NodesFile),
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
	_, err := clock.hook(ctx, c, skewed, &db.ClockSkew{Rate: 0.5})
	require.NoError(t, err)
	_, err = clock.hook(ctx, c, bumped, &db.ClockSkew{OffsetMS: 700})
	require.NoError(t, err)
	var faults struct{ Clock bedClock }
	require.NoError(t, bedGetJSON(ctx, "http://"+c.DB.ClientAddr(skewed)+"/faults", time.Second, &faults))
	assert.Equal(t, bedClock{Rate: 0.5}, faults.Clock, "GET /faults shows the rate")
	op, err := (&Pause{Targets: []Target{TargetOne}}).Start(ctx, followers, seeded(3))
	require.NoError(t, err)
	n := op.Value.(faultrec.Process).Nodes[0]
	require.Contains(t, bedProcState(ctx, t, c.Remotes[n], db.Node{Name: n}), "stopped")
}

// assertHealed checks that no node's process is stopped and no clock is
// skewed.
func assertHealed(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		assert.NotContains(t, bedProcState(ctx, t, c.Remotes[n.Name], n), "stopped", n.Name)
		var faults struct{ Clock bedClock }
		require.NoError(t, bedGetJSON(ctx, "http://"+c.DB.ClientAddr(n)+"/faults", time.Second, &faults), n.Name)
		assert.Equal(t, bedClock{Rate: 1}, faults.Clock, "%s: no clock skew left", n.Name)
	}
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

// bedClock is the clock of a node's GET /faults answer.
type bedClock struct {
	OffsetMS int64   `json:"offset_ms"`
	Rate     float64 `json:"rate"`
}
