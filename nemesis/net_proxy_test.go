package nemesis

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/internal/golden"
)

// netFaultProxy places the fault proxy as a run on remote hosts does,
// with a binary of the test's own.
func netFaultProxy(t *testing.T, upload bool) *FaultProxy {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chaos")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	fp := NewFaultProxy(db.DefaultLayout(), upload)
	fp.Binary = bin
	if !upload {
		fp.Path = "/usr/local/bin/chaos" // Binary in place, as transcripts show it
	}
	return fp
}

// etcd on hosts without netem: delay goes to the fault proxy on both ends
// of every link, duplication to TEE, loss to the statistic match; the
// proxy's binary is copied once per host, the proxy started once, and
// Stop removes the rules and stops it.
func TestPacketProxyForEtcd(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	hosts := netSeparateHosts(c, log, netProbeNoNetem)
	useSystem(c, &db.Etcd{})
	c.FaultProxy = netFaultProxy(t, true)
	hosts["n2"].proxy.sum, _ = control.FileSHA256(c.FaultProxy.Binary) // n2 has it already
	p := &Packet{Behavior: PacketBehavior{DelayMS: 75, JitterMS: 10, Duplicate: 0.01},
		Links: netLinks(PacketLinks{"n1": {"n2"}})}
	require.NoError(t, p.Available(ctx, c))
	log.take()
	out := netPacketRun(t, p, c, log, 1)
	out += "== again\n" + netPacketRun(t, p, c, log, 1)
	golden.Equal(t, "testdata/packet-proxy-etcd.golden", out)
	for name, h := range hosts {
		assert.False(t, h.proxy.running, "%s: the proxy still runs", name)
		require.NotNil(t, h.tables["nat"], name)
		assert.Empty(t, h.tables["nat"].chains, name)
		assert.Empty(t, h.tables["nat"].rules, name)
	}
	assert.Equal(t, 2, hosts["n1"].proxy.starts)
	assert.Zero(t, hosts["n3"].proxy.starts, "n3 has no link")
}

// Local mode: the nodes share one host, its proxy (started once) and its
// chain; each node sets its own links, and the client port is
// intercepted with the peer port.
func TestPacketProxyLocalMode(t *testing.T) {
	log := &netLog{}
	c := netCluster("127.0.0", 3)
	host := newNetFakeHost(log, netProbeNoNetem, "lo")
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = host.remote(n.Name)
	}
	useSystem(c, &db.ChaosNode{})
	c.FaultProxy = netFaultProxy(t, false)
	p := &Packet{Behavior: PacketBehavior{RateKbit: 800}, NoNetem: true,
		Links: netLinks(PacketLinks{"n1": {"n2", "n3"}})}
	host.probe = netProbeNoNetem + "htb no exit 2: Error: Specified qdisc kind is unknown.\n" // the last answer counts
	golden.Equal(t, "testdata/packet-proxy-local.golden", netPacketRun(t, p, c, log, 1))
	assert.Equal(t, 1, host.proxy.starts)
	assert.False(t, host.proxy.running)
}

// Each part goes to the first mechanism every host involved offers; the
// proxy comes after netem and the hooks for delay, after htb for the
// rate, and it never reorders.
func TestPacketProxyMechanismChoice(t *testing.T) {
	ctx := context.Background()
	b := PacketBehavior{DelayMS: 10, Reorder: 0.1, RateKbit: 100, Duplicate: 0.1}
	links := PacketLinks{"n1": {"n2"}}
	for _, tc := range []struct {
		name        string
		probe       string // every host's
		hooks, fp   bool
		mech        map[string]string
		unavailable []string
	}{
		{"netem", netProbeNetem, false, true,
			map[string]string{PartDelay: MechNetem, PartReorder: MechNetem, PartRate: MechHTB, PartDuplicate: MechNetem}, nil},
		{"hooks", netProbeNoNetem, true, true,
			map[string]string{PartDelay: MechHooks, PartReorder: MechHooks, PartRate: MechHTB, PartDuplicate: MechHooks}, nil},
		{"proxy", netProbeNoNetem, false, true,
			map[string]string{PartDelay: MechProxy, PartRate: MechHTB, PartDuplicate: MechIPTables}, []string{PartReorder}},
		{"proxy for the rate too", netProbeNoNetem + "htb no exit 2: Error: Specified qdisc kind is unknown.\n", false, true,
			map[string]string{PartDelay: MechProxy, PartRate: MechProxy, PartDuplicate: MechIPTables}, []string{PartReorder}},
		{"no fault proxy placed", netProbeNoNetem, false, false,
			map[string]string{PartRate: MechHTB, PartDuplicate: MechIPTables}, []string{PartDelay, PartReorder}},
		{"no REDIRECT", netProbeNoNetem + "redirect no exit 1: iptables: No chain/target/match by that name.\n", false, true,
			map[string]string{PartRate: MechHTB, PartDuplicate: MechIPTables}, []string{PartDelay, PartReorder}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := netCluster("10.77.0", 3)
			netSeparateHosts(c, &netLog{}, tc.probe)
			useSystem(c, &db.Etcd{})
			if tc.hooks {
				c.Hooks = &db.ChaosNodeHooks{Addrs: map[string]string{"n1": "h1", "n2": "h2", "n3": "h3"}}
			}
			if tc.fp {
				c.FaultProxy = netFaultProxy(t, true)
			}
			p := &Packet{Behavior: b}
			caps, err := p.caps.get(ctx, c)
			require.NoError(t, err)
			pl := p.plan(c, caps, b, links)
			assert.Equal(t, tc.mech, pl.mech)
			assert.Equal(t, tc.unavailable, pl.unavailable)
		})
	}
}

// Why the proxy cannot serve names what is missing, and where.
func TestPacketProxyUnavailableSaysWhy(t *testing.T) {
	ctx := context.Background()
	c := netCluster("10.77.0", 3)
	hosts := netSeparateHosts(c, &netLog{}, netProbeNoNetem)
	hosts["n2"].probe = netProbeNoNetem + "redirect no exit 1: iptables: No chain/target/match by that name.\n"
	useSystem(c, &db.Etcd{})
	c.FaultProxy = netFaultProxy(t, true)
	p := &Packet{Behavior: PacketBehavior{DelayMS: 10}, Links: netLinks(PacketLinks{"n1": {"n2"}})}
	err := p.Available(ctx, c)
	require.ErrorContains(t, err, "proxy: n2: redirect: exit 1: iptables: No chain/target/match by that name.")

	c.FaultProxy.Binary = filepath.Join(t.TempDir(), "missing")
	p = &Packet{Behavior: PacketBehavior{DelayMS: 10}}
	require.ErrorContains(t, p.Available(ctx, c), "proxy: the chaos binary: stat "+c.FaultProxy.Binary+": no such file or directory")
}

// Heal removes the proxy's chain and stops the proxy on every host, also
// when no fault of this process put them there (a killed controller's),
// and also node by node as chaos heal does; the leftovers name them
// first.
func TestPacketProxyHealAfterACrash(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 2)
	hosts := netSeparateHosts(c, log, netProbeNoNetem)
	useSystem(c, &db.Etcd{})
	c.FaultProxy = netFaultProxy(t, true)
	crashed := &Packet{Behavior: PacketBehavior{DelayMS: 50}, Links: netLinks(PacketLinks{"n1": {"n2"}})}
	_, err := crashed.Start(ctx, c, netRand(1))
	require.NoError(t, err)
	require.True(t, hosts["n1"].proxy.running)

	left, err := (&Packet{}).leftovers(ctx, c, c.Nodes[0])
	require.NoError(t, err)
	assert.Equal(t, []string{"iptables nat chain CHAOS-PROXY (2 rules)", "fault proxy process 4242, running"}, left)
	log.take()
	for _, h := range HealEach(ctx, c, []Fault{&Packet{}}) { // chaos heal's way: node by node
		require.NoError(t, h.Err, h.Node.Name)
	}
	golden.Equal(t, "testdata/packet-proxy-heal.golden", log.take())
	for name, h := range hosts {
		assert.False(t, h.proxy.running, name)
		assert.Empty(t, h.tables["nat"].chains, name)
		assert.Empty(t, h.tables["nat"].rules, name)
	}
}

func TestProxyPorts(t *testing.T) {
	n := db.Node{Name: "n1", Addr: "10.77.0.11"}
	assert.Equal(t, []uint16{2380, 2379}, proxyPorts(NewCluster(&db.Etcd{}, nil, nil, false), n))
	assert.Equal(t, []uint16{7001, 7000}, proxyPorts(NewCluster(&db.ChaosNode{}, nil, nil, false), n))
	assert.Nil(t, proxyPorts(NewCluster(netNoPeerDB{}, nil, nil, false), n), "a system that does not say: every port")
}

// netNoPeerDB is a system that does not name its peer address.
type netNoPeerDB struct{ db.DB }

func (netNoPeerDB) ClientAddr(n db.Node) string { return n.Addr + ":8080" }

// election-delay runs on etcd without netem once the fault proxy has a
// place on the hosts: its delay goes through the proxy.
func TestElectionDelayAvailableThroughTheProxy(t *testing.T) {
	ctx := context.Background()
	c := netCluster("10.77.0", 3)
	netSeparateHosts(c, &netLog{}, netProbeNoNetem)
	useSystem(c, &db.Etcd{})
	c.Leader = func(context.Context) (string, error) { return "n1", nil }
	require.ErrorContains(t, (&ElectionDelay{}).Available(ctx, c), "proxy: no place for it on the hosts")
	c.FaultProxy = netFaultProxy(t, true)
	require.NoError(t, (&ElectionDelay{}).Available(ctx, c))
}

// The proxy's daemon makes the proxy's directory, which holds its control
// socket, mode 0700 (the proxy narrows one that was there already).
func TestFaultProxyStartMakesItsDirectoryPrivate(t *testing.T) {
	log := &netLog{}
	host := newNetFakeHost(log, netProbeNoNetem, "eth0")
	fp := netFaultProxy(t, false)
	var ps proxyState
	_, err := ps.start(context.Background(), fp, host.remote("n1"), "n1", nil)
	require.NoError(t, err)
	var starts []string
	for _, c := range log.Take() {
		if netFakeDaemonCmd(c.Cmd) == "start" {
			starts = append(starts, c.Cmd)
		}
	}
	require.Len(t, starts, 1)
	assert.Contains(t, starts[0], "; mkdir -p -m 0700 /var/lib/chaos/fault-proxy && cd /var/lib/chaos/fault-proxy && ")
}
