package nemesis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
	"chaos/nemesis/hostcmd"
	"chaos/testbed"
	"chaos/testbed/bedtest"
)

// bedStatuses reads every node's status; nodes that do not answer are
// left out.
func bedStatuses(ctx context.Context, d db.DB, nodes []db.Node) map[string]bedStatus {
	out := map[string]bedStatus{}
	for _, n := range nodes {
		var st bedStatus
		if bedGetJSON(ctx, "http://"+d.ClientAddr(n)+"/status", time.Second, &st) == nil {
			out[n.Name] = st
		}
	}
	return out
}

// netBedAgreedLeader returns the leader and term when every node answers
// and agrees on both.
func netBedAgreedLeader(ctx context.Context, d db.DB, nodes []db.Node) (string, uint64, bool) {
	sts := bedStatuses(ctx, d, nodes)
	if len(sts) != len(nodes) {
		return "", 0, false
	}
	first := sts[nodes[0].Name]
	for _, st := range sts {
		if st.Leader == "" || st.Leader != first.Leader || st.Term != first.Term {
			return "", 0, false
		}
	}
	return first.Leader, first.Term, sts[first.Leader].Role == "leader"
}

// netBedPut writes through node n and returns how long it took; any answer
// but 200 is an error.
func netBedPut(ctx context.Context, d db.DB, n db.Node, value string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body := strings.NewReader(`{"value":"` + value + `"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+d.ClientAddr(n)+"/kv/e2e", body)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("PUT through %s: status %d: %s", n.Name, resp.StatusCode, b)
	}
	return time.Since(start), nil
}

// netBedRun runs cmd on node's host and returns its stdout.
func netBedRun(ctx context.Context, t *testing.T, c *Cluster, node, cmd string) string {
	t.Helper()
	out, err := control.Output(ctx, c.Remotes[node], cmd)
	require.NoError(t, err, "%s: %s", node, cmd)
	return string(out)
}

// netBedRequireClean checks that no host has a chain, a qdisc or a hook
// fault of chaos's left. It asks every host at once, one command each.
func netBedRequireClean(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	const sep = "--- tc"
	outs, err := mapNodes(c.Nodes, func(n db.Node) (string, error) {
		out, err := control.Output(ctx, c.Remotes[n.Name], "iptables -w -S && echo '"+sep+"' && tc qdisc show")
		return string(out), err
	})
	require.NoError(t, err)
	for i, n := range c.Nodes {
		rules, qdiscs, ok := strings.Cut(outs[i], sep)
		require.True(t, ok, "%s: %q", n.Name, outs[i])
		require.NotContains(t, rules, "CHAOS", "%s: a chaos rule is left", n.Name)
		require.NotContains(t, qdiscs, hostcmd.NetemRoot, "%s: a chaos qdisc is left", n.Name)
		var faults struct {
			Drop []string       `json:"drop"`
			Net  map[string]any `json:"net"`
		}
		require.NoError(t, bedGetJSON(ctx, "http://"+hookAddrs(c)[n.Name]+"/faults", time.Second, &faults))
		require.Empty(t, faults.Drop, "%s: a hook drop list is left", n.Name)
		require.Empty(t, faults.Net, "%s: a hook network fault is left", n.Name)
	}
}

// netBedStepTimeout bounds each step of TestNetworkFaultsOnTestbed on its
// own (bringing the testbed up, deploying, each fault, the final heal):
// ample room on a loaded machine, where one SSH command takes most of a
// second and a fault's Start and Stop run a dozen each, host after host.
const netBedStepTimeout = 2 * time.Minute

// Issue 6's end-to-end test of the network faults, on three testbed hosts
// over SSH: isolating the leader with iptables makes the others elect a
// new leader at a higher term, and healing makes the cluster whole with no
// chaos chain left; statistic loss of 0.5 toward one peer drops about half
// of the packets on that link; a 200 ms delay from the leader through the
// hooks shows in the latency of writes, and Heal leaves no rule, qdisc or
// hook fault behind.
func TestNetworkFaultsOnTestbed(t *testing.T) {
	sys := bedtest.Require(t, "bash") // its /dev/udp sends the loss test's packets
	bin := bedtest.BuildChaos(t)
	begun, last := time.Now(), ""
	step := func(name string) context.Context {
		if last != "" {
			t.Logf("%s took %v", last, time.Since(begun).Round(time.Millisecond))
		}
		begun, last = time.Now(), name
		return bedStep(t, netBedStepTimeout)
	}

	dir := filepath.Join(t.TempDir(), "tb")
	st := bedtest.Up(step("testbed up"), t, sys, testbed.Config{Dir: dir, Hosts: 3, Subnet: "10.77.244.0/24"})
	c := bedDeploy(step("deploy"), t, dir, st, bin, 50*time.Millisecond, time.Second)
	c.Leader = func(ctx context.Context) (string, error) {
		if leader, _, ok := netBedAgreedLeader(ctx, c.DB, c.Nodes); ok {
			return leader, nil
		}
		return "", errors.New("the nodes do not agree on a leader")
	}
	part, pk := &Partition{}, &Packet{}
	t.Cleanup(func() {
		_ = part.Heal(context.Background(), c)
		_ = pk.Heal(context.Background(), c)
	})

	netBedIsolateLeader(step("isolate the leader"), t, c)
	netBedStatisticLoss(step("statistic loss"), t, c)
	netBedHookDelay(step("hook delay"), t, c)

	ctx := step("heal")
	require.NoError(t, part.Heal(ctx, c))
	require.NoError(t, pk.Heal(ctx, c))
	netBedRequireClean(ctx, t, c)
	for _, n := range c.Nodes {
		require.NoError(t, c.DB.Stop(ctx, c.Remotes[n.Name], n))
	}
	step("")
}

// netBedWaitLeader polls until every node agrees on a leader.
func netBedWaitLeader(ctx context.Context, t *testing.T, c *Cluster) (string, uint64) {
	t.Helper()
	var leader string
	var term uint64
	require.Eventually(t, func() bool {
		var ok bool
		leader, term, ok = netBedAgreedLeader(ctx, c.DB, c.Nodes)
		return ok
	}, 15*time.Second, 50*time.Millisecond, "the nodes agree on a leader")
	return leader, term
}

func netBedIsolateLeader(ctx context.Context, t *testing.T, c *Cluster) {
	old, oldTerm := netBedWaitLeader(ctx, t, c)
	p := &Partition{Topologies: []Topology{IsolateLeader}}
	op, err := p.Start(ctx, c, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	v := op.Value.(faultrec.Partition)
	require.Equal(t, MechIPTables, v.Mechanism)
	require.Len(t, v.Grudge[old], 2, "the leader %s drops both others: %v", old, v)

	require.Eventually(t, func() bool {
		sts := bedStatuses(ctx, c.DB, c.Nodes)
		newLeader := false
		for name, st := range sts {
			newLeader = newLeader || (name != old && st.Role == "leader" && st.Term > oldTerm)
		}
		return newLeader && sts[old].Role != "leader"
	}, 20*time.Second, 50*time.Millisecond, "the others elect a new leader at a higher term, and %s steps down", old)
	t.Logf("isolated the leader %s (term %d): %v", old, oldTerm, bedStatuses(ctx, c.DB, c.Nodes))

	op, err = p.Stop(ctx, c)
	require.NoError(t, err)
	require.Equal(t, "stop-partition", op.F)
	rules, err := mapNodes(c.Nodes, func(n db.Node) ([]byte, error) { return control.Output(ctx, c.Remotes[n.Name], "iptables -w -S") })
	require.NoError(t, err)
	for i, n := range c.Nodes {
		require.NotContains(t, string(rules[i]), "CHAOS", n.Name)
	}
	netBedWaitLeader(ctx, t, c)
	oldNode := c.Nodes[0]
	for _, n := range c.Nodes {
		if n.Name == old {
			oldNode = n
		}
	}
	require.Eventually(t, func() bool {
		_, err := netBedPut(ctx, c.DB, oldNode, "whole")
		return err == nil
	}, 10*time.Second, 100*time.Millisecond, "a write through the formerly isolated %s succeeds", old)
}

var netBedCounter = regexp.MustCompile(`-c (\d+) \d+$`)

// netBedUDPCounters returns the packet counters of the rules in INPUT that
// match UDP to port 9, in order.
func netBedUDPCounters(ctx context.Context, t *testing.T, c *Cluster, node string) []int {
	var out []int
	for line := range strings.SplitSeq(netBedRun(ctx, t, c, node, "iptables -w -v -S INPUT"), "\n") {
		if m := netBedCounter.FindStringSubmatch(strings.TrimSpace(line)); m != nil && strings.Contains(line, "--dport 9 ") {
			n, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			out = append(out, n)
		}
	}
	return out
}

func netBedStatisticLoss(ctx context.Context, t *testing.T, c *Cluster) {
	from, to := c.Nodes[0], c.Nodes[1]
	p := &Packet{Behavior: PacketBehavior{Loss: 0.5}, NoNetem: true, Links: netLinks(PacketLinks{from.Name: {to.Name}})}
	// Two rules of the host's own on the receiver count the test's packets:
	// one before chaos's jump (all of them), one after (those that pass).
	rule := fmt.Sprintf("INPUT -s %s/32 -d %s/32 -p udp -m udp --dport 9", from.Addr, to.Addr)
	netBedRun(ctx, t, c, to.Name, "iptables -w -A "+rule)
	op, err := p.Start(ctx, c, rand.New(rand.NewPCG(2, 2)))
	require.NoError(t, err)
	require.Equal(t, map[string]string{PartLoss: MechIPTables}, op.Value.(*faultrec.Packet).Mechanism)
	netBedRun(ctx, t, c, to.Name, "iptables -w -I "+rule)

	const sent = 400
	netBedRun(ctx, t, c, from.Name, fmt.Sprintf(
		"bash -c 'for i in $(seq %d); do echo x > /dev/udp/%s/9; done' 2>/dev/null; true", sent, to.Addr))
	counters := netBedUDPCounters(ctx, t, c, to.Name)
	require.Len(t, counters, 2, "the two counting rules")
	total, passed := counters[0], counters[1]
	require.GreaterOrEqual(t, total, sent*9/10, "most packets reach the receiver's INPUT")
	dropped := float64(total-passed) / float64(total)
	require.InDelta(t, 0.5, dropped, 0.15, "share dropped: %d of %d passed", passed, total)
	t.Logf("statistic loss 0.5 %s -> %s: %d of %d packets dropped (%.2f)", from.Name, to.Name, total-passed, total, dropped)

	_, err = p.Stop(ctx, c)
	require.NoError(t, err)
	rules := netBedRun(ctx, t, c, to.Name, "iptables -w -S")
	require.NotContains(t, rules, "CHAOS")
	require.Equal(t, 2, strings.Count(rules, "--dport 9"), "the host's own rules stay")
	netBedRun(ctx, t, c, to.Name, "iptables -w -D "+rule+" && iptables -w -D "+rule)
}

func netBedHookDelay(ctx context.Context, t *testing.T, c *Cluster) {
	leader, _ := netBedWaitLeader(ctx, t, c)
	var follower db.Node
	var others []string
	for _, n := range c.Nodes {
		if n.Name != leader {
			follower = n
			others = append(others, n.Name)
		}
	}
	fast := netBedQuickPut(ctx, t, c, follower, "before", "without the fault a write can be quick")

	p := &Packet{Behavior: PacketBehavior{DelayMS: 200}, NoNetem: true, Links: netLinks(PacketLinks{leader: others})}
	op, err := p.Start(ctx, c, rand.New(rand.NewPCG(3, 3)))
	require.NoError(t, err)
	require.Equal(t, map[string]string{PartDelay: MechHooks}, op.Value.(*faultrec.Packet).Mechanism)
	for i := range 3 {
		took, err := netBedPut(ctx, c.DB, follower, fmt.Sprint("delayed", i))
		require.NoError(t, err)
		require.GreaterOrEqual(t, took, 200*time.Millisecond, "a write waits for the leader's delayed append")
		t.Logf("PUT through %s with %s's appends delayed 200 ms: %v (before: %v)", follower.Name, leader, took, fast)
	}
	require.NoError(t, p.Heal(ctx, c))
	netBedRequireClean(ctx, t, c)
	netBedQuickPut(ctx, t, c, follower, "after", "healed, a write can be quick again")
}

// netBedQuickPut writes through n until a write takes less than the
// 200 ms of the delay fault, for at most bedDeadline, and returns how long
// that write took. Any write may be slow on a loaded machine; one quick
// one shows that nothing holds every write back.
func netBedQuickPut(ctx context.Context, t *testing.T, c *Cluster, n db.Node, value, msg string) time.Duration {
	t.Helper()
	var took time.Duration
	require.Eventually(t, func() bool {
		d, err := netBedPut(ctx, c.DB, n, value)
		took = d
		return err == nil && d < 200*time.Millisecond
	}, bedDeadline, 100*time.Millisecond, msg)
	return took
}
