package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/nemesis/hostcmd"
)

// leftoverDB is a system whose node processes are what procs says; it
// records the nodes it stops and resumes. Any other method of db.DB is
// not expected (nil DB: a test that calls one panics).
type leftoverDB struct {
	db.DB
	mu      sync.Mutex
	procs   map[string]db.Process
	stopped []string
	resumed []string
}

func (d *leftoverDB) Name() string { return "chaos-node" }

// Capabilities: it names its processes, and nothing else.
func (d *leftoverDB) Capabilities() db.Capabilities { return db.Capabilities{Processes: d} }

func (d *leftoverDB) Process(_ context.Context, _ control.Remote, n db.Node) (db.Process, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.procs[n.Name], nil
}

func (d *leftoverDB) Stop(_ context.Context, _ control.Remote, n db.Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = append(d.stopped, n.Name)
	delete(d.procs, n.Name)
	return nil
}

func (d *leftoverDB) Resume(_ context.Context, _ control.Remote, n db.Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resumed = append(d.resumed, n.Name)
	return nil
}

// noProcessDB is leftoverDB for a system that cannot name its processes.
type noProcessDB struct{ db.DB }

func (noProcessDB) Name() string                                          { return "other" }
func (noProcessDB) Resume(context.Context, control.Remote, db.Node) error { return nil }

// crashedHost is local mode's host after a controller killed
// mid-partition and mid-packet-fault: chaos's two chains with their jumps
// and rules, its root qdisc on lo, and the host's own chain, which stays.
func crashedHost(log *netLog) *netFakeHost {
	h := newNetFakeHost(log, netProbeNetem, "lo")
	h.chains = []string{"DOCKER", hostcmd.PartitionChain, hostcmd.PacketChain}
	h.rules = []string{"-A INPUT -j " + hostcmd.PacketChain, "-A INPUT -j " + hostcmd.PartitionChain, "-A INPUT -j DOCKER",
		"-A DOCKER -p tcp --dport 80 -j ACCEPT",
		"-A " + hostcmd.PartitionChain + " -s 127.0.0.12/32 -d 127.0.0.11/32 -j DROP",
		"-A " + hostcmd.PartitionChain + " -s 127.0.0.11/32 -d 127.0.0.12/32 -j DROP",
		"-A " + hostcmd.PacketChain + " -s 127.0.0.13/32 -d 127.0.0.11/32 -m statistic --mode random --probability 0.1 -j DROP"}
	h.roots["lo"] = "qdisc htb c4a5: dev lo root refcnt 2 r2q 10 default 0 direct_packets_stat 0 direct_qlen 1000"
	return h
}

// A run's setup after a crash in local mode: every node shares the host,
// so the first node finds the chains and the qdisc and removes them; the
// processes found are stopped; the hooks are not asked, for their state
// went with the processes; the host's own chain stays.
func TestHealLeftoversAfterACrash(t *testing.T) {
	log := &netLog{}
	host := crashedHost(log)
	c := netCluster("127.0.0", 3)
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = host.remote(n.Name)
	}
	c.Hooks = newNetHooks(t, log, c.Nodes).hooks()
	c.SharedClock = true
	d := &leftoverDB{procs: map[string]db.Process{"n2": {Pid: 4242, Stopped: true}, "n3": {Pid: 4343}}}
	useSystem(c, d)

	op, err := HealLeftovers(context.Background(), c, true)
	require.NoError(t, err)
	b, err := json.Marshal(map[string]any{"f": op.F, "value": op.Value})
	require.NoError(t, err)
	assert.JSONEq(t, `{"f":"heal","value":{"leftovers":{
		"n1":["iptables chain CHAOS-PARTITION (2 rules)","tc root qdisc c4a5: on lo","iptables chain CHAOS-PACKET (1 rule)"],
		"n2":["chaos-node process 4242, paused"],
		"n3":["chaos-node process 4343, running"]}}}`, string(b))

	assert.Equal(t, []string{"n2", "n3"}, d.stopped, "the processes found, and only those, are stopped")
	assert.Equal(t, []string{"n1", "n2", "n3"}, d.resumed, "pause's heal ran on every node")
	assert.Equal(t, []string{"DOCKER"}, host.chains)
	assert.Equal(t, []string{"-A INPUT -j DOCKER", "-A DOCKER -p tcp --dport 80 -j ACCEPT"}, host.rules)
	assert.Equal(t, "qdisc noqueue 0: dev lo root refcnt 2", host.roots["lo"])
	assert.NotContains(t, log.take(), "hook", "no hook asked")

	// A second setup finds nothing, and records nothing.
	op, err = HealLeftovers(context.Background(), c, true)
	require.NoError(t, err)
	assert.Equal(t, Op{}, op)
}

// On hosts with clocks of their own, a system clock chaos left off true
// time is named, with the NTP services it stopped, and set back.
func TestHealLeftoversSystemClock(t *testing.T) {
	log := &netLog{}
	c := netCluster("10.77.0", 2)
	hosts := netSeparateHosts(c, log, netProbeNetem)
	useSystem(c, &leftoverDB{})
	marker := map[string]bool{"n2": true}
	for name, h := range hosts {
		h.answer = func(cmd string) (control.Result, bool) {
			switch {
			case strings.HasPrefix(cmd, "m=/var/lib/chaos/clock-ntp-stopped; if [ -f \"$m\" ]; then echo marker"):
				if marker[name] {
					return netOK("marker\nchrony\nsomething-else\n"), true
				}
				return netOK(""), true
			case strings.Contains(cmd, "clock-ntp-stopped") && strings.Contains(cmd, "date -s @"):
				log.Note(name, "reset the clock")
				return netOK(""), true
			}
			return control.Result{}, false
		}
	}
	op, err := HealLeftovers(context.Background(), c, false)
	require.NoError(t, err)
	assert.Equal(t, faultrec.Heal{Leftovers: map[string][]string{"n2": {"system clock set by chaos, NTP off (stopped: chrony)"}}}, op.Value)
	out := log.take()
	assert.Contains(t, out, "n1: reset the clock")
	assert.Contains(t, out, "n2: reset the clock")
}

// A node whose host cannot be checked is an error naming it; the others
// are still healed, and what was found on them is still named.
func TestHealLeftoversGoesPastAFailure(t *testing.T) {
	log := &netLog{}
	c := netCluster("10.77.0", 2)
	hosts := netSeparateHosts(c, log, netProbeNetem)
	hosts["n1"].fail = "iptables -w -S"
	crashed := crashedHost(log)
	crashed.roots = map[string]string{"eth0": "qdisc htb c4a5: dev eth0 root refcnt 2"}
	c.Remotes["n2"] = crashed.remote("n2")
	useSystem(c, &leftoverDB{})
	c.SharedClock = true
	op, err := HealLeftovers(context.Background(), c, false)
	require.ErrorContains(t, err, "n1: partition: list iptables: n1: `iptables -w -S` exited 1: canned failure")
	require.ErrorContains(t, err, "n1: packet: list iptables: ")
	require.ErrorContains(t, err, "heal partition: n1: partition: heal CHAOS-PARTITION, CHAOS-TARGET: ", "n1 was healed all the same")
	assert.Equal(t, faultrec.Heal{Leftovers: map[string][]string{"n2": {"iptables chain CHAOS-PARTITION (2 rules)",
		"tc root qdisc c4a5: on eth0", "iptables chain CHAOS-PACKET (1 rule)"}}}, op.Value)
	assert.Equal(t, []string{"DOCKER"}, crashed.chains)
}

// A system that cannot name its processes keeps them: they are left to
// the setup's Stop, and the hooks are asked, for a process may hold
// faults.
func TestHealLeftoversWithoutProcesses(t *testing.T) {
	log := &netLog{}
	c := netCluster("10.77.0", 1)
	netSeparateHosts(c, log, netProbeNetem)
	c.Hooks = newNetHooks(t, log, c.Nodes).hooks()
	useSystem(c, noProcessDB{})
	c.SharedClock = true
	op, err := HealLeftovers(context.Background(), c, false)
	require.NoError(t, err)
	assert.Equal(t, Op{}, op)
	assert.Contains(t, log.take(), "n1: hook DELETE /faults/partition")
}

// Nodes on one host are healed one after the other: all of them in local
// mode, and those with the same address otherwise.
func TestHostGroups(t *testing.T) {
	nodes := []db.Node{{Name: "n1", Addr: "a"}, {Name: "n2", Addr: "b"}, {Name: "n3", Addr: "a"}}
	assert.Equal(t, [][]int{{0, 2}, {1}}, hostGroups(nodes, false))
	assert.Equal(t, [][]int{{0, 1, 2}}, hostGroups(nodes, true))
	assert.Empty(t, hostGroups(nil, false))
}
