package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/control"
	"chaos/db"
	"chaos/nemesis"
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
		{[]string{"--nodes", "a", "--ssh-private-key", missing}, missing},
		{[]string{"--nodes", "a", "--password", "x", "--known-hosts", missing}, "known_hosts file " + missing + " does not exist"},
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
	code, out, errOut := execute(t, "heal", "--nodes", "127.0.0.1:1",
		"--strict-host-key-checking=false", "--timeout", "10s")
	assert.Equal(t, exitSetup, code, errOut)
	assert.Empty(t, out)
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
	hosts, err := healOptions{hostFlags: hostFlags{nodesFile: file, sshPort: 22}, db: "etcd", timeout: 1}.validate()
	require.NoError(t, err)
	assert.Equal(t, []string{"10.77.0.11", "10.77.0.12:2222", "[fd00::3]:22"}, hosts)
	assert.Equal(t, []db.Node{{Name: "n1", Addr: "10.77.0.11"}, {Name: "n2", Addr: "10.77.0.12"}, {Name: "n3", Addr: "fd00::3"}},
		cluster.Nodes(hosts))

	hosts, err = healOptions{hostFlags: hostFlags{nodes: "h1, h2", sshPort: 22}, db: "chaos-node", timeout: 1}.validate()
	require.NoError(t, err)
	assert.Equal(t, []string{"h1", "h2"}, hosts)

	hosts, err = healOptions{hostFlags: hostFlags{sshPort: 22}, db: "chaos-node", timeout: 1}.validate()
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
// NTP off).
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
	assert.Equal(t, []nemesis.ClockStrategy{nemesis.ClockHook}, clocks)
	assert.Equal(t, []string{"pause", "partition", "packet", "clock", "figure8", "member", "kill"}, names,
		"every family (figure8 for its append limits, member for the original membership), SIGCONT first so that the nodes answer the hooks")
	_, clocks = strategies(nemesis.HealFaults(false))
	assert.Equal(t, []nemesis.ClockStrategy{nemesis.ClockHook, nemesis.ClockSystem}, clocks)
}

// healRemote records commands; it stands for a reached host.
type healRemote struct {
	host string
	mu   sync.Mutex
	cmds []string
}

func (r *healRemote) Host() string { return r.host }
func (r *healRemote) Close() error { return nil }
func (r *healRemote) Run(_ context.Context, cmd string) (control.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, cmd)
	return control.Result{}, nil
}
func (r *healRemote) Upload(context.Context, string, string, os.FileMode) error { return nil }
func (r *healRemote) Download(context.Context, string, string) error            { return nil }

// The pieces of a heal put together: the reached host is healed by every
// family in the layout given, the one that was not is reported, in order.
func TestHealReportsEveryHost(t *testing.T) {
	o := healOptions{db: "etcd", dataDir: "/data"}
	nodes := cluster.Nodes([]string{"h1:2222", "h2", "h3"})
	r1, r3 := &healRemote{host: "n1"}, &healRemote{host: "n3"}
	d, err := o.newDB(nodes)
	require.NoError(t, err)
	c, outcome := reached(d, nodes, []control.Remote{r1, nil, r3}, []error{nil, errors.New("n2: ssh: connection refused"), nil})
	assert.Empty(t, c.HookAddrs, "etcd has no hooks")
	for _, h := range nemesis.HealEach(context.Background(), c, nemesis.HealFaults(false)) {
		outcome[h.Node.Name] = h.Err
	}
	var out, errOut bytes.Buffer
	err = printHeal(&out, &errOut, nodes, outcome)
	require.EqualError(t, err, "heal failed on 1 of 3 hosts")
	assert.Equal(t, "n1 (h1): healed\nn3 (h3): healed\n", out.String())
	assert.Equal(t, "chaos: heal n2 (h2): n2: ssh: connection refused\n", errOut.String())
	for _, r := range []*healRemote{r1, r3} {
		require.Len(t, r.cmds, 5, "%q", r.cmds)
		assert.Contains(t, r.cmds[0], `kill -CONT "$(cat /data/etcd/`+r.host+`/etcd.pid)"`, "pause first")
		assert.Equal(t, []string{"iptables -w -S", "tc qdisc show", "iptables -w -S"}, r.cmds[1:4], "partition, packet")
		assert.Contains(t, r.cmds[4], `m=/var/lib/chaos/clock-ntp-stopped; if [ -f "$m" ]`, "system clock")
	}
}

// With chaos-node, every reached node's hooks are cleared through its
// client address.
func TestHealChaosNodeHookAddresses(t *testing.T) {
	o := healOptions{db: "chaos-node", dataDir: "/data"}
	nodes := cluster.Nodes([]string{"10.77.0.11", "10.77.0.12"})
	d, err := o.newDB(nodes)
	require.NoError(t, err)
	c, _ := reached(d, nodes, []control.Remote{&healRemote{}, nil}, []error{nil, errors.New("unreachable")})
	assert.Equal(t, map[string]string{"n1": "10.77.0.11:7000"}, c.HookAddrs)
	assert.Equal(t, []db.Node{nodes[0]}, c.Nodes)
}
