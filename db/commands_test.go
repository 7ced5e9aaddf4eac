package db

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(p, []byte(got), 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err, "run with -update to create %s", p)
	require.Equal(t, string(want), got)
}

var threeNodes = []Node{{"n1", "10.77.0.11"}, {"n2", "10.77.0.12"}, {"n3", "10.77.0.13"}}

// lifecycle runs every DB method once against a recording Remote.
func lifecycle(t *testing.T, d DB) string {
	t.Helper()
	ctx := context.Background()
	r := &recorder{host: "n2"}
	n := threeNodes[1]
	require.NoError(t, d.Install(ctx, r, n))
	require.NoError(t, d.Start(ctx, r, n))
	require.NoError(t, d.Pause(ctx, r, n))
	require.NoError(t, d.Resume(ctx, r, n))
	require.NoError(t, d.Kill(ctx, r, n))
	require.NoError(t, d.Stop(ctx, r, n))
	require.NoError(t, d.Wipe(ctx, r, n))
	require.NoError(t, d.CollectLogs(ctx, r, n, t.TempDir()))
	return r.transcript()
}

func TestChaosNodeCommands(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Upload: true, Layout: DefaultLayout(), Nodes: threeNodes,
		Bugs: []string{"stale-read"}, FaultHooks: true}
	golden(t, "chaos-node", lifecycle(t, d))
	require.Equal(t, "10.77.0.12:7000", d.ClientAddr(threeNodes[1]))
}

func TestChaosNodeLocalModeRunsTheBinaryInPlace(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Layout: Layout{DataDir: "/tmp/run", Procs: 1}, Nodes: threeNodes}
	golden(t, "chaos-node-local", lifecycle(t, d))
}

func TestEtcdCommands(t *testing.T) {
	d := &Etcd{Layout: DefaultLayout(), Nodes: threeNodes}
	golden(t, "etcd", lifecycle(t, d))
	require.Equal(t, "10.77.0.12:2379", d.ClientAddr(threeNodes[1]))
}

func TestEtcdMissingBinaryIsOneClearLine(t *testing.T) {
	d := &Etcd{Layout: DefaultLayout(), Nodes: threeNodes}
	r := &recorder{host: "n2", exit: map[string]int{"command -v etcd": 1}}
	err := d.Install(context.Background(), r, threeNodes[1])
	require.EqualError(t, err, "n2: install: no etcd binary on the host; install Debian's etcd-server package (apt-get install -y etcd-server) or pass --binary")
}

func TestStartOfARunningNodeFails(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Layout: DefaultLayout(), Nodes: threeNodes}
	r := &recorder{host: "n1", exit: map[string]int{"setsid": exitAlreadyRunning}}
	err := d.Start(context.Background(), r, threeNodes[0])
	require.ErrorContains(t, err, "n1: start chaos-node: canned failure")
}

func TestFailedCommandNamesTheHost(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Layout: DefaultLayout(), Nodes: threeNodes}
	r := &recorder{host: "n3", exit: map[string]int{"kill": 1}}
	err := d.Kill(context.Background(), r, threeNodes[2])
	require.EqualError(t, err, "n3: kill: exited 1: canned failure")
}
