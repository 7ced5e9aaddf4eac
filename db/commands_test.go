package db

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/control/remotetest"
	"chaos/internal/golden"
)

var threeNodes = []Node{{"n1", "10.77.0.11"}, {"n2", "10.77.0.12"}, {"n3", "10.77.0.13"}}

// lifecycle runs every DB method once against a recording Remote.
func lifecycle(t *testing.T, d DB) string {
	t.Helper()
	ctx := context.Background()
	var rec remotetest.Recorder
	r := rec.Remote("n2", nil)
	n := threeNodes[1]
	require.NoError(t, d.Install(ctx, r, n))
	require.NoError(t, d.Start(ctx, r, n))
	require.NoError(t, d.Pause(ctx, r, n))
	require.NoError(t, d.Resume(ctx, r, n))
	require.NoError(t, d.Kill(ctx, r, n))
	require.NoError(t, d.Stop(ctx, r, n))
	require.NoError(t, d.Wipe(ctx, r, n))
	require.NoError(t, d.CollectLogs(ctx, r, n, t.TempDir()))
	return remotetest.Transcript(rec.Take())
}

func TestChaosNodeCommands(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Upload: true, Layout: DefaultLayout(), Nodes: threeNodes,
		Bugs: []string{"stale-read"}, FaultHooks: true}
	golden.Equal(t, "testdata/chaos-node.golden", lifecycle(t, d))
	require.Equal(t, "10.77.0.12:7000", d.ClientAddr(threeNodes[1]))
}

func TestChaosNodeLocalModeRunsTheBinaryInPlace(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Layout: Layout{DataDir: "/tmp/run", Procs: 1}, Nodes: threeNodes}
	golden.Equal(t, "testdata/chaos-node-local.golden", lifecycle(t, d))
}

func TestEtcdCommands(t *testing.T) {
	d := &Etcd{Layout: DefaultLayout(), Nodes: threeNodes}
	golden.Equal(t, "testdata/etcd.golden", lifecycle(t, d))
	require.Equal(t, "10.77.0.12:2379", d.ClientAddr(threeNodes[1]))
}

func TestEtcdMissingBinaryIsOneClearLine(t *testing.T) {
	d := &Etcd{Layout: DefaultLayout(), Nodes: threeNodes}
	r := new(remotetest.Recorder).Remote("n2", remotetest.FailOn("command -v etcd", 1))
	err := d.Install(context.Background(), r, threeNodes[1])
	require.EqualError(t, err, "n2: install: no etcd binary on the host; install Debian's etcd-server package (apt-get install -y etcd-server) or pass --binary")
}

func TestStartOfARunningNodeFails(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Layout: DefaultLayout(), Nodes: threeNodes}
	r := new(remotetest.Recorder).Remote("n1", remotetest.FailOn("setsid", exitAlreadyRunning))
	err := d.Start(context.Background(), r, threeNodes[0])
	require.ErrorContains(t, err, "n1: start chaos-node: canned failure")
}

func TestFailedCommandNamesTheHost(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Layout: DefaultLayout(), Nodes: threeNodes}
	r := new(remotetest.Recorder).Remote("n3", remotetest.FailOn("kill", 1))
	err := d.Kill(context.Background(), r, threeNodes[2])
	require.EqualError(t, err, "n3: kill: exited 1: canned failure")
}
