package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
	"chaos/internal/golden"
)

// netPacketRun starts and stops p on c and returns the transcript.
func netPacketRun(t *testing.T, p *Packet, c *Cluster, log *netLog, seed uint64) string {
	t.Helper()
	ctx := context.Background()
	op, err := p.Start(ctx, c, netRand(seed))
	require.NoError(t, err)
	out := log.take() + netOpLine(t, op)
	op, err = p.Stop(ctx, c)
	require.NoError(t, err)
	return out + log.take() + netOpLine(t, op)
}

// Hosts with netem: one htb root per interface with chaos's handle, a
// class per sender, a netem leaf and one u32 filter per link.
func TestPacketByNetem(t *testing.T) {
	log := &netLog{}
	c := netCluster("10.77.0", 5)
	hosts := netSeparateHosts(c, log, netProbeNetem)
	b := UnreliableNetwork()
	b.Corrupt, b.RateKbit = 0.001, 2000
	p := &Packet{Behavior: b, Links: netLinks(PacketLinks{"n2": {"n5", "n1", "n3"}, "n4": {"n1"}})}
	require.NoError(t, p.Available(context.Background(), c))
	out := netPacketRun(t, p, c, log, 1)

	// The default: seed 003's network, links chosen with the seed.
	out += "== defaults (seed 7)\n" + netPacketRun(t, &Packet{}, c, log, 7)
	golden.Equal(t, "testdata/packet-netem.golden", out)
	for name, h := range hosts {
		require.Equal(t, "qdisc noqueue 0: dev eth0 root refcnt 2", h.roots["eth0"], name)
	}
}

// This machine: no netem. Loss goes to iptables' statistic match on the
// receivers, delay, duplication and reordering to the hooks, the bandwidth
// cap to htb; corruption cannot be done.
func TestPacketWithoutNetem(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	netSeparateHosts(c, log, netProbeNoNetem)
	c.Hooks = newNetHooks(t, log, c.Nodes).hooks()
	b := UnreliableNetwork()
	b.Corrupt, b.RateKbit = 0.001, 2000
	p := &Packet{Behavior: b, Links: netLinks(PacketLinks{"n1": {"n2", "n3"}, "n3": {"n2"}})}

	err := p.Available(ctx, c)
	var unavailable *PacketUnavailableError
	require.ErrorAs(t, err, &unavailable)
	require.Equal(t, []string{PartCorrupt}, unavailable.Parts)
	require.EqualError(t, err, "packet: these hosts cannot perform corrupt: corrupt (netem: n1: netem: exit 2: Error: Specified qdisc kind is unknown.)")
	log.take()
	golden.Equal(t, "testdata/packet-no-netem.golden", netPacketRun(t, p, c, log, 1))
}

// etcd on hosts without netem, and no place for the fault proxy: loss
// and duplication can be done (iptables' statistic match and TEE); the
// rest is reported, plainly, by Available and in the op value.
func TestPacketForEtcdWithoutNetem(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	netSeparateHosts(c, log, netProbeNoNetem)
	useSystem(c, &db.Etcd{})
	p := &Packet{}
	err := p.Available(ctx, c)
	require.EqualError(t, err, "packet: these hosts cannot perform delay, reorder: "+
		"delay (netem: n1: netem: exit 2: Error: Specified qdisc kind is unknown.; hooks: n1: no fault hooks (etcd has none); "+
		"proxy: no place for it on the hosts (Cluster.FaultProxy is nil)); "+
		"reorder (netem: n1: netem: exit 2: Error: Specified qdisc kind is unknown.; hooks: n1: no fault hooks (etcd has none); "+
		"proxy: a TCP stream delivers its bytes in order)")
	log.take()
	golden.Equal(t, "testdata/packet-etcd.golden", netPacketRun(t, p, c, log, 2))

	// Nothing at all possible: Start refuses.
	_, err = (&Packet{Behavior: PacketBehavior{Corrupt: 0.1}}).Start(ctx, c, netRand(1))
	require.ErrorAs(t, err, new(*PacketUnavailableError))
}

// Local mode on a machine with netem: five senders share lo's root qdisc,
// each with a class of its own, and the filters match source and
// destination.
func TestPacketLocalModeSharesTheRootQdisc(t *testing.T) {
	log := &netLog{}
	c := netCluster("127.0.0", 5)
	host := newNetFakeHost(log, netProbeNetem, "lo")
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = host.remote(n.Name)
	}
	all := PacketLinks{}
	for _, n := range c.Nodes {
		all[n.Name] = netWithout(partitionNames(c.Nodes), n.Name)
	}
	p := &Packet{Behavior: PacketBehavior{DelayMS: 100}, Links: netLinks(all)}
	golden.Equal(t, "testdata/packet-local.golden", netPacketRun(t, p, c, log, 1))
	require.Equal(t, "qdisc noqueue 0: dev lo root refcnt 2", host.roots["lo"])
}

// A host whose interface has a root qdisc of its own keeps it: Start fails
// saying so and undoes the rest, and Heal leaves that qdisc alone.
func TestPacketNeverReplacesTheHostsQdisc(t *testing.T) {
	ctx := context.Background()
	c := netCluster("10.77.0", 3)
	hosts := netSeparateHosts(c, &netLog{}, netProbeNetem)
	fq := "qdisc fq_codel 8001: dev eth0 root refcnt 2 limit 10240p flows 1024"
	hosts["n2"].roots["eth0"] = fq
	p := &Packet{Behavior: PacketBehavior{Loss: 0.5}, Links: netLinks(PacketLinks{"n1": {"n2"}, "n2": {"n1"}})}
	_, err := p.Start(ctx, c, netRand(1))
	require.ErrorContains(t, err, "n2: packet: n2: `tc qdisc add dev eth0 root handle c4a5: htb")
	require.ErrorContains(t, err, "cannot add the chaos root qdisc on eth0: the root qdisc there belongs to the host")
	require.Equal(t, fq, hosts["n2"].roots["eth0"])
	require.Equal(t, "qdisc noqueue 0: dev eth0 root refcnt 2", hosts["n1"].roots["eth0"], "Start undid n1's qdisc")
	require.NoError(t, p.Heal(ctx, c))
	require.Equal(t, fq, hosts["n2"].roots["eth0"])
}

func TestNetemArgs(t *testing.T) {
	all := map[string]string{PartLoss: MechNetem, PartDelay: MechNetem, PartDuplicate: MechNetem,
		PartReorder: MechNetem, PartCorrupt: MechNetem}
	b := PacketBehavior{Loss: 0.07, DelayMS: 20, JitterMS: 61, Duplicate: 0.001, Reorder: 0.25, Corrupt: 0.0001}
	assert.Equal(t, "delay 50.5ms 30.5ms loss 7% duplicate 0.1% reorder 25% corrupt 0.01%", netemArgs(b, all))
	assert.Equal(t, "delay 20ms", netemArgs(PacketBehavior{DelayMS: 20}, all))
	assert.Equal(t, "loss 7%", netemArgs(b, map[string]string{PartLoss: MechNetem, PartDelay: MechHooks}))
}

// A name `ip route get` answers with that breaks the rules fails the
// packet fault before any tc command is built with it.
func TestPacketRefusesABadInterfaceName(t *testing.T) {
	for _, dev := range []string{"eth0:1", "a-very-long-interface-name", ".."} {
		log := &netLog{}
		c := netCluster("10.77.0", 3)
		for _, h := range netSeparateHosts(c, log, netProbeNetem) {
			h.dev = dev
		}
		p := &Packet{Behavior: PacketBehavior{DelayMS: 50}, Links: netLinks(PacketLinks{"n1": {"n2"}})}
		_, err := p.Start(context.Background(), c, netRand(1))
		require.ErrorContains(t, err, "n1: packet: route to 10.77.0.12: interface name "+`"`+dev+`"`, dev)
		out := log.take()
		for _, change := range []string{"tc qdisc add", "tc class", "tc filter"} {
			assert.NotContains(t, out, change, "%s: no tc command built with it ran", dev)
		}
	}
}

func TestPacketBehaviorValidate(t *testing.T) {
	require.NoError(t, UnreliableNetwork().Validate())
	for b, want := range map[PacketBehavior]string{
		{}:                                "packet behavior: no fault in it",
		{Loss: 1.5}:                       "packet behavior: loss probability 1.5 outside [0, 1]",
		{DelayMS: 50000, JitterMS: 20000}: "packet behavior: delay 50000 ms plus jitter 20000 ms outside [0, 60000] ms",
		{Reorder: 0.1}:                    "packet behavior: reorder needs delay_ms > 0 (a reordered packet overtakes delayed ones)",
		{RateKbit: -1}:                    "packet behavior: negative rate -1 kbit/s",
	} {
		require.EqualError(t, b.Validate(), want)
	}
}

func TestPacketDefaultLinksDegradeChosenSendersTowardEveryone(t *testing.T) {
	nodes := grudgeNodes(5)
	sizes := map[int]bool{}
	for seed := range uint64(40) {
		links := packetDefaultLinks(nodes, netRand(seed))
		sizes[len(links)] = true
		for from, tos := range links {
			require.Equal(t, netWithout(nodes, from), tos)
		}
	}
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true, 5: true}, sizes, "one, minority, majority, all")
}

func TestPacketRejectsForeignLinks(t *testing.T) {
	c := netCluster("10.77.0", 3)
	netSeparateHosts(c, &netLog{}, netProbeNetem)
	for links, want := range map[string]PacketLinks{
		"packet: link n1 -> n1: not a link between two nodes of the cluster": {"n1": {"n1"}},
		"packet: link n1 -> n9: not a link between two nodes of the cluster": {"n1": {"n9"}},
		"packet: no link to degrade":                                         {"n1": {}},
	} {
		_, err := (&Packet{Links: netLinks(want)}).Start(context.Background(), c, netRand(1))
		require.EqualError(t, err, links)
	}
	_, err := (&Packet{Links: func(context.Context, *Cluster, *rand.Rand) (PacketLinks, error) {
		return nil, errors.New("no leader")
	}}).Start(context.Background(), c, netRand(1))
	require.EqualError(t, err, "packet: no leader")
}
