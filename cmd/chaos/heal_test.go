package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/nemesis"
	"chaos/testrun/runrecord"
)

func TestHealBadArguments(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("# no hosts\n\n"), 0o644))
	dups := filepath.Join(dir, "dups")
	require.NoError(t, os.WriteFile(dups, []byte("10.77.0.11\n10.77.0.12\n10.77.0.11\n"), 0o644))
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--nodes-file", missing}, "--nodes-file: open " + missing + ": no such file or directory"},
		{[]string{"--nodes-file", dups}, "host 10.77.0.11 appears twice in the node list"},
		{[]string{"--nodes", "a,b,a"}, "host a appears twice in the node list"},
		{[]string{"--nodes", "a,a:22"}, "host a:22 appears twice in the node list"},
		{[]string{"--nodes", "a:2222,a", "--ssh-port", "2222"}, "host a appears twice in the node list"},
		{[]string{"--nodes-file", empty}, "--nodes-file " + empty + " lists no host"},
		{[]string{"--nodes", " , "}, `--nodes " , " names no host`},
		{[]string{"--nodes", "a", "--nodes-file", dups}, "give --nodes or --nodes-file, not both"},
		{[]string{"--db", "mongo"}, `--db "mongo": want chaos-node or etcd`},
		{[]string{"--timeout", "0s"}, "--timeout 0s: want a positive duration"},
		{[]string{"--ssh-port", "0"}, "--ssh-port 0: want 1 to 65535"},
		{[]string{"--db", "etcd", "--nodes", "a", "--ssh-private-key", missing}, missing},
		{[]string{"--db", "etcd", "--nodes", "a", "--password", "x", "--known-hosts", missing}, "known_hosts file " + missing + " does not exist"},
		{[]string{"--store", dir}, "no run to heal: " + filepath.Join(dir, "latest", "test.json") + " does not exist; give --store DIR"},
		{[]string{"--store", missing}, "no run to heal: " + filepath.Join(missing, "latest", "test.json") + " does not exist; give --store DIR"},
		{[]string{"--store", dir, "--nodes", "a"}, "or --db SYSTEM (with --nodes or --nodes-file; none: local mode) to heal without a run"},
		{[]string{"extra"}, `unknown command "extra"`},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
	}
	for _, c := range cases {
		code, out, errOut := execute(t, append([]string{"heal"}, c.args...)...)
		assert.Equal(t, exitUsage, code, "chaos heal %v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "chaos heal %v", c.args)
		assert.Empty(t, out, "chaos heal %v", c.args)
	}
}

// A host that cannot be reached is one line on stderr and exit 255.
func TestHealUnreachableHost(t *testing.T) {
	t.Setenv("CHAOS_SSH_PASSWORD", "x") // something to log in with
	code, out, errOut := execute(t, "heal", "--db", "chaos-node", "--nodes", "127.0.0.1:1",
		"--strict-host-key-checking=false", "--timeout", "10s")
	assert.Equal(t, exitSetup, code, errOut)
	assert.Equal(t, "hosts: n1 127.0.0.1:1\n", out, "the hosts are named before they are dialed")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	require.Len(t, lines, 2, errOut)
	assert.True(t, strings.HasPrefix(lines[0], "chaos: heal n1 (127.0.0.1): "), lines[0])
	assert.Contains(t, lines[0], "connection refused")
	assert.Equal(t, "heal failed on 1 of 1 hosts", lines[1])
}

func TestHealFlagsParse(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nodes")
	require.NoError(t, os.WriteFile(file, []byte("# testbed\n10.77.0.11\n\n  10.77.0.12:2222  \n[fd00::3]:22\n"), 0o644))
	given := func(string) bool { return true }
	hosts, err := (&healOptions{hostFlags: hostFlags{nodesFile: file, sshPort: 22}, db: "etcd", timeout: 1}).resolve(io.Discard, io.Discard, given)
	require.NoError(t, err)
	assert.Equal(t, []string{"10.77.0.11", "10.77.0.12:2222", "[fd00::3]:22"}, hosts)
	assert.Equal(t, []db.Node{{Name: "n1", Addr: "10.77.0.11"}, {Name: "n2", Addr: "10.77.0.12"}, {Name: "n3", Addr: "fd00::3"}},
		cluster.Nodes(hosts))

	hosts, err = (&healOptions{hostFlags: hostFlags{nodes: "h1, h2", sshPort: 22}, db: "chaos-node", timeout: 1}).resolve(io.Discard, io.Discard, given)
	require.NoError(t, err)
	assert.Equal(t, []string{"h1", "h2"}, hosts)

	hosts, err = (&healOptions{hostFlags: hostFlags{sshPort: 22}, db: "chaos-node", timeout: 1}).resolve(io.Discard, io.Discard, given)
	require.NoError(t, err)
	assert.Empty(t, hosts, "local mode")
	local := cluster.Nodes(nil)
	require.Len(t, local, 5)
	assert.Equal(t, db.Node{Name: "n5", Addr: "127.0.0.15"}, local[4])

	cfg, err := hostFlags{user: "ops", keyFile: "/k", password: "pw", sshPort: 2222, knownHosts: "/kh"}.sshConfig(io.Discard)
	require.NoError(t, err)
	assert.Equal(t, control.SSHConfig{User: "ops", KeyFiles: []string{"/k"}, Password: "pw", Port: 2222, Agent: true,
		InsecureIgnoreHostKey: true, KnownHosts: "/kh", Warn: io.Discard}, cfg)
}

// Local mode shares this machine's clock: its heal never includes the
// system clock strategy; over SSH it does (acting only where chaos left
// NTP off). Both reset the fake clocks' control files.
func TestHealFaultsNeverSetTheSharedClock(t *testing.T) {
	strategies := func(faults []nemesis.Fault) (names []string, clocks []nemesis.ClockStrategy) {
		for _, f := range faults {
			names = append(names, f.Name())
			if c, ok := f.(*nemesis.Clock); ok {
				clocks = append(clocks, c.Strategy)
			}
		}
		return names, clocks
	}
	names, clocks := strategies(nemesis.HealFaults(true))
	assert.Equal(t, []nemesis.ClockStrategy{nemesis.ClockHook, nemesis.ClockFaketime, nemesis.ClockVDSO}, clocks)
	assert.Equal(t, []string{"pause", "partition", "packet", "clock", "clock", "clock", "figure8", "member", "power-loss", "kill"}, names,
		"every family (figure8 for its append limits, member for the original membership, power-loss for every storage family), "+
			"SIGCONT first so that the nodes answer the hooks")
	_, clocks = strategies(nemesis.HealFaults(false))
	assert.Equal(t, []nemesis.ClockStrategy{nemesis.ClockHook, nemesis.ClockFaketime, nemesis.ClockVDSO, nemesis.ClockSystem}, clocks)
}

// The pieces of a heal put together: the reached host is healed by every
// family in the layout given, the one that was not is reported, in order.
func TestHealReportsEveryHost(t *testing.T) {
	o := healOptions{db: "etcd", dataDir: "/data"}
	nodes := cluster.Nodes([]string{"h1:2222", "h2", "h3"})
	var rec1, rec3 remotetest.Recorder // what the reached hosts n1 and n3 ran
	layout, err := o.layout(false)
	require.NoError(t, err)
	d, err := o.newDB(nodes, layout)
	require.NoError(t, err)
	c, outcome := reached(d, nodes, []control.Remote{rec1.Remote("n1", nil), nil, rec3.Remote("n3", nil)},
		[]error{nil, errors.New("n2: ssh: connection refused"), nil})
	c.FaultProxy = nemesis.NewFaultProxy(layout, true)
	assert.Nil(t, c.Hooks, "etcd has no hooks")
	for _, h := range nemesis.HealEach(context.Background(), c, nemesis.HealFaults(false)) {
		outcome[h.Node.Name] = h.Err
	}
	var out, errOut bytes.Buffer
	err = printHeal(&out, &errOut, nodes, outcome)
	require.EqualError(t, err, "heal failed on 1 of 3 hosts")
	assert.Equal(t, "n1 (h1): healed\nn3 (h3): healed\n", out.String())
	assert.Equal(t, "chaos: heal n2 (h2): n2: ssh: connection refused\n", errOut.String())
	for host, rec := range map[string]*remotetest.Recorder{"n1": &rec1, "n3": &rec3} {
		cmds := remotetest.Cmds(rec.Take())
		require.Len(t, cmds, 12, "%q", cmds)
		assert.Contains(t, cmds[0], `[ -f /data/etcd/`+host+`/etcd.pid ]`, "pause first")
		assert.Contains(t, cmds[0], `kill -CONT $p`, "pause first")
		assert.Equal(t, []string{"iptables -w -S", "tc qdisc show", "iptables -w -S", "iptables -w -t mangle -S", "iptables -w -t nat -S"},
			cmds[1:6], "partition, packet (its TEE and proxy chains too)")
		assert.Contains(t, cmds[6], `[ -f /data/fault-proxy/fault-proxy.pid ]`, "packet: the fault proxy")
		assert.Contains(t, cmds[6], `kill -TERM`, "packet: the fault proxy")
		assert.Contains(t, cmds[7], `if [ -f /data/etcd/`+host+`/faketimerc ]; then`, "fake clock")
		assert.Contains(t, cmds[8], `m=/var/lib/chaos/clock-ntp-stopped; if [ -f "$m" ]`, "system clock")
		assert.Contains(t, cmds[9], `[ -f /data/etcd/`+host+`/etcd.pid ]`, "storage: does the node run?")
		assert.Contains(t, cmds[10], `[ -f /data/etcd/`+host+`/faultfs.pid ]`, "storage: the node does not: its fault file system stops")
		assert.Contains(t, cmds[10], `kill -TERM`, "storage: the node does not: its fault file system stops")
		assert.Equal(t, `if awk -v d=/data/etcd/`+host+`/data '$2 == d { f = 1 } END { exit !f }' /proc/self/mounts; then umount -l /data/etcd/`+host+`/data; fi`,
			cmds[11], "storage: and its mount goes")
	}
}

// With chaos-node, every reached node's hooks are cleared through its
// client address; the nodes not reached are left out.
func TestHealChaosNodeHookAddresses(t *testing.T) {
	o := healOptions{db: "chaos-node", dataDir: "/data"}
	nodes := cluster.Nodes([]string{"10.77.0.11", "10.77.0.12"})
	d, err := o.newDB(nodes, db.DefaultLayout())
	require.NoError(t, err)
	c, _ := reached(d, nodes, []control.Remote{new(remotetest.Recorder).Remote("n1", nil), nil}, []error{nil, errors.New("unreachable")})
	require.IsType(t, &db.ChaosNodeHooks{}, c.Hooks)
	assert.Equal(t, "10.77.0.11:7000", c.Hooks.(*db.ChaosNodeHooks).Addrs["n1"])
	assert.Equal(t, []db.Node{nodes[0]}, c.Nodes)
}

// writeRun writes rec as the newest run of a store of its own, as chaos
// run lays it out, and returns the store.
func writeRun(t *testing.T, rec runrecord.TestRecord) string {
	t.Helper()
	store := t.TempDir()
	dir := filepath.Join(store, rec.Name, "20260102T030405.678Z")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test.json"), b, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(rec.Name, "20260102T030405.678Z"), filepath.Join(store, "latest")))
	return store
}

// Without --db, chaos heal heals the newest run: its system, its hosts,
// its SSH user and port unless their flags are given, but never its key
// files, known_hosts or host key checking, which it names on stderr; and
// it says which run that is.
func TestHealTakesTheNewestRun(t *testing.T) {
	rec := runrecord.TestRecord{Name: "etcd-register-pause", Started: "2026-01-02T03:04:05.678Z", DB: "etcd",
		Nodes: []string{"10.77.0.11", "10.77.0.12:2200"}, Nemesis: []string{"pause"},
		SSH: &runrecord.SSHRecord{User: "ops", Port: 2222, PrivateKeys: []string{"/tb/id_ed25519"}, KnownHosts: "/tb/known_hosts",
			StrictHostKeyChecking: true}}
	store := writeRun(t, rec)
	o := healOptions{hostFlags: hostFlags{user: "root", sshPort: 22, strictHostKeys: false}, store: store, timeout: time.Minute}
	var out, warn bytes.Buffer
	hosts, err := o.resolve(&out, &warn, func(flag string) bool { return flag == "strict-host-key-checking" })
	require.NoError(t, err)
	assert.Equal(t, rec.Nodes, hosts)
	assert.Equal(t, "etcd", o.db)
	cfg, err := o.sshConfig(io.Discard)
	require.NoError(t, err)
	cfg.Warn = nil
	assert.Equal(t, control.SSHConfig{User: "ops", Port: 2222, Agent: true, InsecureIgnoreHostKey: true}, cfg,
		"the flag given wins over the run's, and the run's key and known_hosts are not taken")
	assert.Equal(t, "chaos: note: heal takes keys, known_hosts and host key checking only from its flags, never from the store; "+
		"the run used --ssh-private-key /tb/id_ed25519 --known-hosts /tb/known_hosts: give them again if you trust them\n", warn.String())
	assert.Equal(t, "healing run etcd-register-pause/20260102T030405.678Z, started 2026-01-02T03:04:05.678Z: etcd on 2 hosts, nemesis pause\n",
		out.String())

	// Hosts given on the command line win over the run's; --db skips the
	// store altogether.
	o = healOptions{hostFlags: hostFlags{nodes: "h9", sshPort: 22}, store: store, timeout: time.Minute}
	hosts, err = o.resolve(io.Discard, io.Discard, func(string) bool { return false })
	require.NoError(t, err)
	assert.Equal(t, []string{"h9"}, hosts)
	assert.Equal(t, "etcd", o.db)
	out.Reset()
	o = healOptions{hostFlags: hostFlags{sshPort: 22}, db: "chaos-node", store: store, timeout: time.Minute}
	hosts, err = o.resolve(&out, io.Discard, func(string) bool { return false })
	require.NoError(t, err)
	assert.Empty(t, hosts)
	assert.Equal(t, "chaos-node", o.db)
	assert.Empty(t, out.String())
}

// A local run is healed in local mode.
func TestHealTakesANewestLocalRun(t *testing.T) {
	store := writeRun(t, runrecord.TestRecord{Name: "chaos-node-register-all", Started: "2026-01-02T03:04:05Z",
		DB: "chaos-node", Local: true})
	o := healOptions{hostFlags: hostFlags{sshPort: 22}, store: store, timeout: time.Minute}
	var out bytes.Buffer
	hosts, err := o.resolve(&out, io.Discard, func(string) bool { return false })
	require.NoError(t, err)
	assert.Empty(t, hosts)
	assert.Equal(t, "chaos-node", o.db)
	assert.Contains(t, out.String(), ": chaos-node on local mode, nemesis all\n")
}

// A newest run that cannot be read, or names no system, is one line and
// exit 254.
func TestHealRefusesABrokenRun(t *testing.T) {
	store := writeRun(t, runrecord.TestRecord{Name: "x"})
	code, out, errOut := execute(t, "heal", "--store", store)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, filepath.Join(store, "latest", "test.json")+" names no system (db); give --db")

	require.NoError(t, os.WriteFile(filepath.Join(store, "latest", "test.json"), []byte("{"), 0o644))
	code, _, errOut = execute(t, "heal", "--store", store)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "the newest run in "+store+": ")
	assert.Contains(t, errOut, "give --db to heal without it")
}

// The whole command on the newest run's hosts: the run is named on
// stdout, and the host it cannot reach on stderr.
func TestHealTheNewestRunUnreachable(t *testing.T) {
	operatorHome(t)
	store := writeRun(t, runrecord.TestRecord{Name: "etcd-register-pause", Started: "2026-01-02T03:04:05Z", DB: "etcd",
		Nodes: []string{"127.0.0.1:1"}, SSH: &runrecord.SSHRecord{User: "root", Port: 22, StrictHostKeyChecking: true}})
	code, out, errOut := execute(t, "heal", "--store", store, "--password", "x", "--timeout", "10s")
	assert.Equal(t, exitSetup, code, errOut)
	assert.Equal(t, "healing run etcd-register-pause/20260102T030405.678Z, started 2026-01-02T03:04:05Z: etcd on 1 hosts, nemesis all\n"+
		"hosts: n1 127.0.0.1:1\n", out)
	assert.Contains(t, errOut, "chaos: heal n1 (127.0.0.1): ")
}

// chaos heal in local mode refuses a local directory another user could
// have planted pidfiles in, as chaos run does: one line, exit 255, nothing
// signalled.
func TestHealRefusesAPlantedLocalDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, fmt.Sprintf("chaos-local-%d", os.Getuid()))
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chown(dir, 65534, 65534), "chown to nobody (the tests run as root)")
	code, out, errOut := execute(t, "heal", "--db", "chaos-node")
	assert.Equal(t, exitSetup, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, dir+" belongs to uid 65534, not to uid")
	assert.NotContains(t, strings.TrimSpace(errOut), "\n")
}
