package nemesis

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
)

// netFakeContainer is a fake host's Remote that is also a container (see
// control.ContainerOf), whose network namespace restart makes new.
type netFakeContainer struct {
	control.Remote
	host *netFakeHost
}

func (f netFakeContainer) Name() string                                  { return f.Host() }
func (f netFakeContainer) Do(context.Context, string, ...string) error   { return nil }
func (f netFakeContainer) Logs(context.Context, io.Writer) error         { return nil }
func (f netFakeContainer) RestartPolicy(context.Context) (string, error) { return "no", nil }
func (f netFakeContainer) Inspect(context.Context) (string, string, error) {
	return "running", "", nil
}

// restart gives the container a new network namespace, as `docker start`
// of a stopped container does: none of chaos's chains, rules or qdiscs.
func (f netFakeContainer) restart() {
	f.host.mu.Lock()
	defer f.host.mu.Unlock()
	f.host.chains, f.host.rules, f.host.tables = nil, nil, nil
	f.host.roots = map[string]string{f.host.dev: "qdisc noqueue 0: dev " + f.host.dev + " root refcnt 2"}
	f.host.proxy.running = false // the binary stays: a container keeps its files
}

// netContainers gives each node of c a fake container of its own, whose
// kernel has netem.
func netContainers(c *Cluster, log *netLog) map[string]netFakeContainer {
	return netContainersProbed(c, log, netProbeNetem)
}

// netContainersProbed is netContainers with the kernel probe answers.
func netContainersProbed(c *Cluster, log *netLog, probe string) map[string]netFakeContainer {
	out := map[string]netFakeContainer{}
	for name, h := range netSeparateHosts(c, log, probe) {
		out[name] = netFakeContainer{Remote: c.Remotes[name], host: h}
		c.Remotes[name] = out[name]
	}
	return out
}

// netState is what a fake host holds of chaos's: iptables and qdiscs.
func netState(h *netFakeHost) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	roots := slices.Sorted(maps.Values(h.roots))
	return h.iptablesS() + "\n" + slices.Concat(roots, []string{""})[0]
}

// A container restarted while a partition and a packet fault are in force
// gets both again, exactly as they were; one whose namespace kept them is
// left as it is; once the faults are stopped, a restart puts nothing
// back; and a host that is not a container is never asked.
func TestNetFaultsInForceComeBackOnARestartedContainer(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	c.rules = &ruleTable{}
	cts := netContainers(c, log)
	p := &Partition{Topologies: []Topology{IsolateOne}}
	_, err := p.Start(ctx, c, netRand(7))
	require.NoError(t, err)
	pk := &Packet{}
	_, err = pk.Start(ctx, c, netRand(7))
	require.NoError(t, err)
	before := map[string]string{}
	for _, n := range c.Nodes {
		before[n.Name] = netState(cts[n.Name].host)
	}

	for _, n := range c.Nodes {
		cts[n.Name].restart()
		done, err := c.reapplyNet(ctx, c.Remotes[n.Name], n)
		require.NoError(t, err)
		require.NotEmpty(t, done, n.Name)
		require.Equal(t, before[n.Name], netState(cts[n.Name].host), "%s: the faults as they were", n.Name)
		log.take()
		done, err = c.reapplyNet(ctx, c.Remotes[n.Name], n)
		require.NoError(t, err)
		require.Empty(t, done, "%s kept its namespace", n.Name)
		require.Equal(t, before[n.Name], netState(cts[n.Name].host))
	}

	_, err = p.Stop(ctx, c)
	require.NoError(t, err)
	_, err = pk.Stop(ctx, c)
	require.NoError(t, err)
	for _, n := range c.Nodes {
		cts[n.Name].restart()
		clean := netState(cts[n.Name].host)
		done, err := c.reapplyNet(ctx, c.Remotes[n.Name], n)
		require.NoError(t, err)
		require.Empty(t, done)
		require.Equal(t, clean, netState(cts[n.Name].host))
	}

	log.take()
	plain := netCluster("10.78.0", 3)
	plain.rules = &ruleTable{}
	hosts := netSeparateHosts(plain, log, netProbeNetem)
	_, err = (&Partition{Topologies: []Topology{IsolateOne}}).Start(ctx, plain, netRand(7))
	require.NoError(t, err)
	log.take()
	hosts["n1"].chains, hosts["n1"].rules = nil, nil
	done, err := plain.reapplyNet(ctx, plain.Remotes["n1"], plain.Nodes[0])
	require.NoError(t, err)
	require.Empty(t, done)
	require.Equal(t, "\n", log.take(), "a host that is not a container is not asked")
}

// A targeted cut in force comes back on a restarted container, through
// the views of the cluster the sequences use, and not after it stopped;
// Partition's Heal forgets the cuts too.
func TestTargetedCutComesBackOnARestartedContainer(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	c.rules = &ruleTable{}
	cts := netContainers(c, log)
	view := c.among([]string{"n1", "n2", "n3"})
	cut := &netCut{owner: "lease"}
	require.NoError(t, cut.set(ctx, view, grudgeIsolate([]string{"n1", "n2", "n3"}, "n2")))
	before := netState(cts["n2"].host)

	cts["n2"].restart()
	done, err := c.reapplyNet(ctx, c.Remotes["n2"], c.Nodes[1])
	require.NoError(t, err)
	require.Equal(t, []string{"cut"}, done)
	require.Equal(t, before, netState(cts["n2"].host))

	require.NoError(t, cut.stop(ctx, view))
	cts["n2"].restart()
	done, err = c.reapplyNet(ctx, c.Remotes["n2"], c.Nodes[1])
	require.NoError(t, err)
	require.Empty(t, done)

	require.NoError(t, cut.set(ctx, view, grudgeIsolate([]string{"n1", "n2", "n3"}, "n1")))
	require.NoError(t, (&Partition{}).Heal(ctx, c))
	cts["n1"].restart()
	done, err = c.reapplyNet(ctx, c.Remotes["n1"], c.Nodes[0])
	require.NoError(t, err)
	require.Empty(t, done, "Heal forgot the cut")
}

// Where the kernel has no netem, a packet fault's delay goes through the
// fault proxy: a restarted container gets its proxy started again with
// the node's links, and the REDIRECT rules back.
func TestProxiedLinksComeBackOnARestartedContainer(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	c.rules = &ruleTable{}
	cts := netContainersProbed(c, log, netProbeNoNetem)
	useSystem(c, &db.Etcd{})
	c.FaultProxy = netFaultProxy(t, true)
	p := &Packet{Behavior: PacketBehavior{DelayMS: 75}, Links: netLinks(PacketLinks{"n1": {"n2"}})}
	op, err := p.Start(ctx, c, netRand(1))
	require.NoError(t, err)
	require.Equal(t, map[string]string{PartDelay: MechProxy}, op.Value.(*faultrec.Packet).Mechanism)
	h := cts["n2"].host
	before := netState(h) + fmt.Sprint(h.tables["nat"])
	require.True(t, h.proxy.running)

	cts["n2"].restart()
	done, err := c.reapplyNet(ctx, c.Remotes["n2"], c.Nodes[1])
	require.NoError(t, err)
	require.Equal(t, []string{"packet"}, done)
	require.True(t, h.proxy.running, "the proxy runs again")
	require.Equal(t, 2, h.proxy.starts)
	require.Equal(t, before, netState(h)+fmt.Sprint(h.tables["nat"]))
	require.Equal(t, map[string][]string{"n2": {"packet"}}, c.ruleTable().take([]string{"n1", "n2"}))

	// What a restart nobody took put back is not reported with a later
	// restart that put nothing back.
	cts["n2"].restart()
	_, err = c.reapplyNet(ctx, c.Remotes["n2"], c.Nodes[1])
	require.NoError(t, err)
	_, err = p.Stop(ctx, c)
	require.NoError(t, err)
	_, err = c.reapplyNet(ctx, c.Remotes["n2"], c.Nodes[1])
	require.NoError(t, err)
	require.Nil(t, c.ruleTable().take([]string{"n2"}))
}
