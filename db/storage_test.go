package db

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/internal/golden"
)

// faultFSAnswers answers as a host where the fault file system's status
// answers once it is started.
func faultFSAnswers(call remotetest.Call) (control.Result, error) {
	if call.Kind == remotetest.Run && strings.Contains(call.Cmd, " faultfs status ") {
		return control.Result{Stdout: []byte(`{"pending_files":0,"undo_bytes":0,"pending_names":0}` + "\n")}, nil
	}
	return control.Result{}, nil
}

// testFaultFS is a fault file system whose binary is a file of the test.
func testFaultFS(t *testing.T, upload bool) *FaultFS {
	bin := filepath.Join(t.TempDir(), "chaos")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	f := &FaultFS{Binary: bin, Upload: upload, Path: bin}
	if upload {
		f.Path = "/opt/chaos/chaos-faultfs"
	}
	return f
}

// storageLifecycle is lifecycle with the hosts answering faultFSAnswers,
// the local binary's path written as BINARY.
func storageLifecycle(t *testing.T, d DB, bin string) string {
	t.Helper()
	ctx := context.Background()
	var rec remotetest.Recorder
	r := rec.Remote("n2", faultFSAnswers)
	n := threeNodes[1]
	require.NoError(t, d.Install(ctx, r, n))
	require.NoError(t, d.Start(ctx, r, n))
	require.NoError(t, d.Kill(ctx, r, n))
	require.NoError(t, d.Stop(ctx, r, n))
	require.NoError(t, d.Wipe(ctx, r, n))
	require.NoError(t, d.CollectLogs(ctx, r, n, t.TempDir()))
	return strings.ReplaceAll(remotetest.Transcript(rec.Take()), bin, "BINARY")
}

// With storage faults, the data directory is served through the fault
// file system: its binary uploaded at install, the file system started
// (after any dead mount is detached) before the node and answering before
// the node starts, stopped and its mount detached after the node stops,
// and its backing directory wiped with the data.
func TestChaosNodeStorageCommands(t *testing.T) {
	fs := testFaultFS(t, true)
	d := &ChaosNode{Binary: "/build/chaos", Upload: true, Layout: DefaultLayout(), Nodes: threeNodes, Storage: fs}
	golden.Equal(t, "testdata/chaos-node-storage.golden", storageLifecycle(t, d, fs.Binary))
	m := d.StorageMount(threeNodes[1])
	assert.Equal(t, StorageMount{Node: "n2", Data: "/var/lib/chaos/chaos-node/n2/data", Backing: "/var/lib/chaos/chaos-node/n2/data.backing",
		Socket: "/var/lib/chaos/chaos-node/n2/faultfs.sock", Daemon: Daemon{Dir: "/var/lib/chaos/chaos-node/n2", Name: "faultfs"}, FS: fs}, m)
}

func TestEtcdStorageCommands(t *testing.T) {
	fs := testFaultFS(t, false)
	d := &Etcd{Layout: DefaultLayout(), Nodes: threeNodes, Storage: fs}
	golden.Equal(t, "testdata/etcd-storage.golden", storageLifecycle(t, d, fs.Binary))
}

// A fault file system that does not answer after its start fails the
// node's start, naming its log.
func TestStorageMountThatDoesNotAnswer(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Layout: DefaultLayout(), Nodes: threeNodes, Storage: testFaultFS(t, false)}
	r := new(remotetest.Recorder).Remote("n1", remotetest.FailOn("faultfs status", 255))
	err := d.Start(context.Background(), r, threeNodes[0])
	require.ErrorContains(t, err, "n1: storage faults: the fault file system does not answer (see /var/lib/chaos/chaos-node/n1/faultfs.log)")
}

// Without storage faults nothing of the fault file system runs.
func TestNoStorageNoMount(t *testing.T) {
	d := &ChaosNode{Binary: "/build/chaos", Upload: true, Layout: DefaultLayout(), Nodes: threeNodes}
	assert.NotContains(t, storageLifecycle(t, d, "/build/chaos"), "faultfs")
	assert.Nil(t, d.StorageMount(threeNodes[0]).FS)
}
