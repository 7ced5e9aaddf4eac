package db

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/testbed/bedtest"
)

func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// writeEventually retries a write until a leader accepts it.
func writeEventually(t *testing.T, url, body string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, _ := httpDo(t, "PUT", url, body)
		return code == 200
	}, 10*time.Second, 50*time.Millisecond)
}

// The full lifecycle on this machine through the local Remote: install,
// start, ready, kill and restart with recovery, logs, stop.
func TestChaosNodeLifecycleLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin := bedtest.BuildChaos(t)
	nodes := []Node{{"n1", "127.0.0.61"}, {"n2", "127.0.0.62"}, {"n3", "127.0.0.63"}}
	d := &ChaosNode{Binary: bin, Layout: Layout{DataDir: t.TempDir()}, Nodes: nodes,
		ClientPort: 7600, PeerPort: 7601, Heartbeat: 20 * time.Millisecond, Election: 200 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	remotes := startLocally(ctx, t, d, nodes)
	err := d.Start(ctx, remotes["n1"], nodes[0])
	require.ErrorContains(t, err, "n1: start chaos-node: already running as pid")

	writeEventually(t, "http://"+d.ClientAddr(nodes[0])+"/kv/a", `{"value":"1"}`)
	require.NoError(t, d.Kill(ctx, remotes["n2"], nodes[1]))
	writeEventually(t, "http://"+d.ClientAddr(nodes[0])+"/kv/a", `{"value":"2"}`)
	require.NoError(t, d.Start(ctx, remotes["n2"], nodes[1]))
	require.NoError(t, d.Ready(ctx, nodes[1]))
	require.Eventually(t, func() bool {
		code, body := httpDo(t, "GET", "http://"+d.ClientAddr(nodes[1])+"/kv/a", "")
		return code == 200 && strings.Contains(body, `"2"`)
	}, 10*time.Second, 50*time.Millisecond, "the restarted node serves the latest write")

	logs := t.TempDir()
	require.NoError(t, d.CollectLogs(ctx, remotes["n2"], nodes[1], logs))
	events, err := os.ReadFile(filepath.Join(logs, "events.jsonl"))
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(events), `"event":"start"`), "two starts of n2 in its event log")
	require.FileExists(t, filepath.Join(logs, "node.log"))

	for _, n := range nodes {
		require.NoError(t, d.Stop(ctx, remotes[n.Name], n))
		require.NoFileExists(t, filepath.Join(d.Layout.NodeDir(chaosNodeName, n), "node.pid"))
	}
	_, err = (&http.Client{Timeout: time.Second}).Get("http://" + d.ClientAddr(nodes[0]) + "/status")
	require.Error(t, err, "n1 still answers after Stop")
}

func TestStartReportsAProcessThatDiesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin := bedtest.BuildChaos(t)
	nodes := []Node{{"n1", "127.0.0.64"}}
	d := &ChaosNode{Binary: bin, Layout: Layout{DataDir: t.TempDir()}, Nodes: nodes,
		ClientPort: 7600, PeerPort: 7601, Bugs: []string{"no-such-bug"}}
	r := control.NewLocal("n1")
	ctx := context.Background()
	require.NoError(t, d.Install(ctx, r, nodes[0]))
	err := d.Start(ctx, r, nodes[0])
	require.ErrorContains(t, err, "exited right after start")
	require.ErrorContains(t, err, `unknown bug "no-such-bug"`)
}

// A daemon with Procs runs with that GOMAXPROCS in its environment.
func TestDaemonProcsSetsGOMAXPROCS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	d := Daemon{Dir: t.TempDir(), Name: "d", Procs: 3}
	r := control.NewLocal("n1")
	ctx := context.Background()
	require.NoError(t, d.Start(ctx, r, []string{"sh", "-c", "echo procs=$GOMAXPROCS; exec sleep 30"}))
	t.Cleanup(func() { _ = d.Stop(context.Background(), r) })
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(d.LogFile())
		return strings.Contains(string(b), "procs=3")
	}, 10*time.Second, 20*time.Millisecond)
}
