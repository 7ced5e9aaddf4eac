package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
	"chaos/history/faultrec"
	"chaos/internal/golden"
	"chaos/nemesis/hostcmd"
)

func netRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

// Every topology on five hosts of their own, by iptables: the exact
// commands of Start and Stop, and the ops.
func TestPartitionTopologiesByIPTablesOnFiveHosts(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	for _, topo := range AllTopologies() {
		log := &netLog{}
		c := netCluster("10.77.0", 5)
		hosts := netSeparateHosts(c, log, netProbeNoNetem)
		c.Leader = func(context.Context) (string, error) { return "n3", nil }
		p := &Partition{Topologies: []Topology{topo}}
		op, err := p.Start(ctx, c, netRand(42))
		require.NoError(t, err, topo)
		out.WriteString("== " + string(topo) + " (seed 42)\n" + log.take() + netOpLine(t, op))
		op, err = p.Stop(ctx, c)
		require.NoError(t, err, topo)
		out.WriteString(log.take() + netOpLine(t, op))
		for name, h := range hosts {
			require.Empty(t, h.chains, "%s: %s left a chain", topo, name)
			require.Empty(t, h.rules, "%s: %s left a rule", topo, name)
		}
	}
	golden.Equal(t, "testdata/partition-iptables.golden", out.String())
}

// In local mode the five nodes share this machine: every node's rules go
// into the one INPUT chain, each matching source and destination, so the
// host as a whole drops exactly the cut links.
func TestPartitionLocalModeRulesShareOneHost(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("127.0.0", 5)
	host := newNetFakeHost(log, netProbeNoNetem, "lo")
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = host.remote(n.Name)
	}
	p := &Partition{Topologies: []Topology{Bridge}}
	op, err := p.Start(ctx, c, netRand(3))
	require.NoError(t, err)
	out := log.take() + netOpLine(t, op)

	g := Grudge(op.Value.(faultrec.Partition).Grudge)
	addr := map[string]string{}
	for _, n := range c.Nodes {
		addr[n.Addr+"/32"] = n.Name
	}
	var cut []string
	for _, r := range host.rules {
		var from, to string
		if f := strings.Fields(r); f[1] == hostcmd.PartitionChain {
			from, to = addr[f[3]], addr[f[5]]
			require.Contains(t, g[to], from, "rule %q cuts a link the grudge keeps", r)
			cut = append(cut, from+">"+to)
		}
	}
	links := 0
	for _, peers := range g {
		links += len(peers)
	}
	require.Len(t, cut, links, "one rule per cut direction")
	require.Equal(t, []string{"-A INPUT -j " + hostcmd.PartitionChain}, host.rules[:1], "one jump, however many nodes share the host")

	op, err = p.Stop(ctx, c)
	require.NoError(t, err)
	out += log.take() + netOpLine(t, op)
	require.Empty(t, host.rules)
	require.Empty(t, host.chains)
	golden.Equal(t, "testdata/partition-local.golden", out)
}

// Local mode as an ordinary user: no iptables, so every node's transport
// drops its grudge through the fault hooks.
func TestPartitionFallsBackToHooksWithoutRoot(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("127.0.0", 5)
	host := newNetFakeHost(log, netProbeNotRoot, "lo")
	host.notRoot = true
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = host.remote(n.Name)
	}
	c.Hooks = newNetHooks(t, log, c.Nodes).hooks()
	p := &Partition{Topologies: []Topology{MajoritiesRing}}
	mech, err := p.Choose(ctx, c)
	require.NoError(t, err)
	require.Equal(t, MechHooks, mech)
	op, err := p.Start(ctx, c, netRand(5))
	require.NoError(t, err)
	out := log.take() + netOpLine(t, op)
	op, err = p.Stop(ctx, c)
	require.NoError(t, err)
	out += log.take() + netOpLine(t, op)
	golden.Equal(t, "testdata/partition-hooks.golden", out)
}

func TestPartitionUnavailableSaysWhy(t *testing.T) {
	ctx := context.Background()
	c := netCluster("127.0.0", 3)
	host := newNetFakeHost(&netLog{}, netProbeNotRoot, "lo")
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = host.remote(n.Name)
	}
	useSystem(c, &db.Etcd{})
	err := (&Partition{}).Available(ctx, c)
	require.EqualError(t, err, "partition: iptables is unusable (n1: iptables: exit 4: iptables v1.8.9 (nf_tables): "+
		"Could not fetch rule set generation id: Permission denied (you must be root)) and there are no fault hooks "+
		"to fall back on (n1: no fault hooks (etcd has none))")

	err = (&Partition{Mechanism: MechHooks}).Available(ctx, c)
	require.EqualError(t, err, "partition by hooks: n1: no fault hooks (etcd has none)")
	err = (&Partition{Mechanism: "nftables"}).Available(ctx, c)
	require.EqualError(t, err, `partition: unknown mechanism "nftables" (want iptables or hooks)`)
	err = (&Partition{}).Available(ctx, netCluster("10.0.0", 1))
	require.EqualError(t, err, "partition: needs at least 2 nodes, the cluster has 1")
}

// Heal removes chaos's chain and jump and nothing else: the host's own
// rules, even in INPUT and in a chain whose name starts like chaos's,
// stay; the packet family's chain stays too. A second Heal does nothing.
func TestPartitionHealNeverTouchesOtherRules(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	hosts := netSeparateHosts(c, log, netProbeNoNetem)
	own := []string{"-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT", "-A INPUT -j CHAOS-PARTITIONS", "-A CHAOS-PARTITIONS -s 10.9.9.9/32 -j DROP"}
	for _, h := range hosts {
		h.chains = []string{"CHAOS-PARTITIONS"}
		h.rules = append(h.rules, own...)
	}
	p := &Partition{Topologies: []Topology{IsolateOne}}
	_, err := p.Start(ctx, c, netRand(1))
	require.NoError(t, err)
	pk := &Packet{Behavior: PacketBehavior{Loss: 0.2}, Links: netLinks(PacketLinks{"n1": {"n2"}})}
	_, err = pk.Start(ctx, c, netRand(1))
	require.NoError(t, err)
	log.take()

	require.NoError(t, p.Heal(ctx, c))
	require.NoError(t, p.Heal(ctx, c))
	golden.Equal(t, "testdata/partition-heal.golden", log.take())
	for name, h := range hosts {
		require.Equal(t, own, netWithout(h.rules, hostcmd.PacketChain), name)
		require.Equal(t, []string{"CHAOS-PARTITIONS"}, netWithout(h.chains, hostcmd.PacketChain), name)
	}
	require.Contains(t, hosts["n2"].rules, "-A CHAOS-PACKET -s 10.77.0.11/32 -d 10.77.0.12/32 -m statistic --mode random --probability 0.2 -j DROP",
		"the partition's heal removed the packet fault's loss")
	require.NoError(t, pk.Heal(ctx, c))
	for name, h := range hosts {
		require.Equal(t, own, h.rules, name)
		require.Equal(t, []string{"CHAOS-PARTITIONS"}, h.chains, name)
	}
}

// netWithout drops the lines that mention word.
func netWithout(lines []string, word string) []string {
	var out []string
	for _, l := range lines {
		if !strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return out
}

// netLinks is a Packet.Links that always returns links.
func netLinks(links PacketLinks) func(context.Context, *Cluster, *rand.Rand) (PacketLinks, error) {
	return func(context.Context, *Cluster, *rand.Rand) (PacketLinks, error) { return links, nil }
}

// A node that refuses its rules fails Start with an error naming it, and
// Start removes what it had added on the others.
func TestPartitionStartFailureNamesTheNodeAndHeals(t *testing.T) {
	ctx := context.Background()
	c := netCluster("10.77.0", 5)
	hosts := netSeparateHosts(c, &netLog{}, netProbeNoNetem)
	hosts["n4"].fail = "-A CHAOS-PARTITION"
	p := &Partition{Topologies: []Topology{Halves}}
	_, err := p.Start(ctx, c, netRand(42))
	require.ErrorContains(t, err, "n4: partition: n4: `iptables -w -A CHAOS-PARTITION")
	require.ErrorContains(t, err, "exited 1: canned failure")
	for name, h := range hosts {
		require.Empty(t, h.rules, name)
		require.Empty(t, h.chains, name)
	}
	// Nothing is active: a new Start may run.
	hosts["n4"].fail = ""
	_, err = p.Start(ctx, c, netRand(42))
	require.NoError(t, err)
	_, err = p.Start(ctx, c, netRand(42))
	require.EqualError(t, err, "partition: a partition is active already; stop it first")
}

// Without a known leader, isolate-leader isolates a random node.
func TestIsolateLeaderWithoutLeaderIsolatesSomeNode(t *testing.T) {
	ctx := context.Background()
	c := netCluster("10.77.0", 5)
	netSeparateHosts(c, &netLog{}, netProbeNoNetem)
	c.Leader = func(context.Context) (string, error) { return "", errors.New("no leader") }
	p := &Partition{Topologies: []Topology{IsolateLeader}}
	op, err := p.Start(ctx, c, netRand(9))
	require.NoError(t, err)
	v := op.Value.(faultrec.Partition)
	isolated := 0
	for _, peers := range v.Grudge {
		if len(peers) == 4 {
			isolated++
		}
	}
	assert.Equal(t, 1, isolated, "%v", v)
	assert.Len(t, v.Grudge, 5, "the isolated node, and four that drop it")
}

func TestHookHealIgnoresDownNodesAndDisabledHooks(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	nodes := netCluster("10.77.0", 1).Nodes
	hooks := newNetHooks(t, log, nodes)
	h := hooks.hooks()

	hooks.status.Store(403)
	require.NoError(t, h.ClearNetFaults(ctx, "n1"))
	hooks.status.Store(500)
	require.EqualError(t, h.ClearNetFaults(ctx, "n1"), "n1: DELETE /faults/net: status 500: fault hooks are disabled")
	hooks.servers["n1"].Close()
	require.NoError(t, h.ClearNetFaults(ctx, "n1"), "a node that is down has no faults")
	err := h.SetNetFaults(ctx, "n1", db.NetFaults{})
	require.ErrorContains(t, err, "n1: POST /faults/net: ")
	assert.True(t, nothingToHeal(err), "a request to a node that is down shows it holds no faults")
}

// Stop undoes only the mechanism the partition used: hooks that fail (a
// paused node would time out) do not hold up removing iptables rules.
// Heal, which must clear everything, does report them.
func TestPartitionStopUndoesOnlyItsMechanism(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	netSeparateHosts(c, log, netProbeNoNetem)
	hooks := newNetHooks(t, log, c.Nodes)
	c.Hooks = hooks.hooks()
	hooks.status.Store(500)
	p := &Partition{Topologies: []Topology{IsolateOne}}
	_, err := p.Start(ctx, c, netRand(1))
	require.NoError(t, err)
	_, err = p.Stop(ctx, c)
	require.NoError(t, err)
	require.NotContains(t, log.take(), "hook")
	err = p.Heal(ctx, c)
	require.ErrorContains(t, err, "partition: n1: DELETE /faults/partition: status 500")
	require.ErrorContains(t, err, "partition: n3: DELETE /faults/partition: status 500")
}
