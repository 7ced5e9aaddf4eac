package db

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/testbed"
	"chaos/testbed/bedtest"
)

// Issue 5's end-to-end test: five testbed hosts, chaos-node deployed over
// real SSH, a cluster that serves writes and reads, a node killed and
// restarted, logs pulled back, a host key mismatch refused, and a testbed
// torn down without leftovers.
func TestChaosNodeOverSSHOnTestbed(t *testing.T) {
	sys := bedtest.Require(t)
	bin := bedtest.BuildChaos(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	dir := filepath.Join(t.TempDir(), "tb")
	st := bedtest.Up(ctx, t, sys, testbed.Config{Dir: dir, Hosts: 5, Subnet: "10.77.241.0/24"})

	cfg := control.SSHConfig{KeyFiles: []string{filepath.Join(dir, "id_ed25519")}, KnownHosts: filepath.Join(dir, "known_hosts")}
	var nodes []Node
	remotes := map[string]control.Remote{}
	for _, h := range st.Hosts {
		r, err := control.DialSSH(ctx, h.Addr, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close() })
		remotes[h.Name] = r
		nodes = append(nodes, Node{Name: h.Name, Addr: h.Addr})
	}
	d := &ChaosNode{Binary: bin, Upload: true, Layout: DefaultLayout(), Nodes: nodes,
		Heartbeat: 20 * time.Millisecond, Election: 200 * time.Millisecond}
	for _, n := range nodes {
		require.NoError(t, d.Install(ctx, remotes[n.Name], n))
		require.NoError(t, d.Start(ctx, remotes[n.Name], n))
	}
	for _, n := range nodes {
		require.NoError(t, d.Ready(ctx, n))
	}
	url := func(n Node) string { return "http://" + d.ClientAddr(n) + "/kv/k" }
	writeEventually(t, url(nodes[0]), `{"value":"1"}`)
	require.Eventually(t, func() bool {
		code, body := httpDo(t, "GET", url(nodes[4]), "")
		return code == 200 && strings.Contains(body, `"1"`)
	}, 10*time.Second, 50*time.Millisecond, "a linearizable read through n5 sees the write through n1")

	require.NoError(t, d.Kill(ctx, remotes["n3"], nodes[2]))
	writeEventually(t, url(nodes[0]), `{"value":"2"}`)
	require.NoError(t, d.Start(ctx, remotes["n3"], nodes[2]))
	require.NoError(t, d.Ready(ctx, nodes[2]))
	require.Eventually(t, func() bool {
		code, body := httpDo(t, "GET", url(nodes[2]), "")
		return code == 200 && strings.Contains(body, `"2"`)
	}, 10*time.Second, 50*time.Millisecond, "the restarted n3 serves the latest write")

	logs := t.TempDir()
	require.NoError(t, d.CollectLogs(ctx, remotes["n3"], nodes[2], logs))
	events, err := os.ReadFile(filepath.Join(logs, "events.jsonl"))
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(events), `"event":"start"`))

	// A known_hosts that pins n1's address to n2's key is refused.
	known, err := os.ReadFile(cfg.KnownHosts)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(known)), "\n")
	n2Key := strings.SplitN(lines[1], " ", 2)[1]
	bad := filepath.Join(t.TempDir(), "known_hosts")
	require.NoError(t, os.WriteFile(bad, []byte(st.Hosts[0].Addr+" "+n2Key+"\n"), 0o644))
	_, err = control.DialSSH(ctx, st.Hosts[0].Addr, control.SSHConfig{KeyFiles: cfg.KeyFiles, KnownHosts: bad})
	require.ErrorContains(t, err, "host key mismatch")

	for _, n := range nodes {
		require.NoError(t, d.Stop(ctx, remotes[n.Name], n))
	}
	_, err = testbed.Down(ctx, sys, dir)
	require.NoError(t, err)
	out, err := exec.Command("ip", "-o", "link").CombinedOutput()
	require.NoError(t, err)
	require.NotContains(t, string(out), st.Prefix, "a link of the testbed is left")
	out, _ = exec.Command("ip", "netns", "list").CombinedOutput()
	require.NotContains(t, string(out), st.Prefix, "a namespace of the testbed is left")
	out, _ = exec.Command("pgrep", "-f", st.Prefix).CombinedOutput()
	require.Empty(t, strings.TrimSpace(string(out)), "a process of the testbed is left")
}
