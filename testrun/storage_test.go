package testrun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/nemesis"
)

// storageRun is a run on three fake hosts whose chaos-node serves its data
// directories through the fault file system, each host answering the
// storage probe with probe (and every other command with success).
func storageRun(t *testing.T, o Options, probe string) *run {
	bin := filepath.Join(t.TempDir(), "chaos")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	nodes := cluster.Nodes([]string{"h1", "h2", "h3"})
	d := &db.ChaosNode{Binary: bin, Upload: true, Layout: db.DefaultLayout(), Nodes: nodes,
		Storage: &db.FaultFS{Binary: bin, Upload: true, Path: "/opt/chaos/chaos-faultfs"}}
	var rec remotetest.Recorder
	remotes := map[string]control.Remote{}
	for _, n := range nodes {
		remotes[n.Name] = rec.Remote(n.Addr, func(c remotetest.Call) (control.Result, error) {
			if strings.Contains(c.Cmd, "/dev/fuse") {
				return control.Result{Stdout: []byte(probe + "\n")}, nil
			}
			return control.Result{}, nil
		})
	}
	return &run{o: o, env: Env{Out: &bytes.Buffer{}}, cl: &cluster.Cluster{Nodes: nodes, Remotes: remotes, DB: d, Layout: db.DefaultLayout()}}
}

// A storage family named turns storage faults on, as --storage-faults does.
func TestStorageFaultsOption(t *testing.T) {
	assert.False(t, (&Options{Nemesis: []string{"kill", "pause"}}).storageFaults())
	assert.True(t, (&Options{Nemesis: []string{"kill", "eio"}}).storageFaults())
	assert.True(t, (&Options{StorageFaults: true}).storageFaults())
}

// With storage faults on, a host that cannot serve the fault file system
// fails the run's setup (exit 255) before any node starts, naming the node,
// its host and what is missing; the storage families join the default mix
// where the hosts can.
func TestPickFaultsWithStorage(t *testing.T) {
	ctx := context.Background()
	r := storageRun(t, Options{StorageFaults: true}, "/dev/fuse is missing (load the fuse module, or give the container the device)")
	_, _, err := r.pickFaults(ctx)
	require.True(t, errors.Is(err, ErrSetup), "%v", err)
	assert.EqualError(t, err, "setup failed: storage faults: n1 (h1): cannot serve the fault file system: "+
		"/dev/fuse is missing (load the fuse module, or give the container the device)")

	r = storageRun(t, Options{StorageFaults: true}, "ok")
	faults, _, err := r.pickFaults(ctx)
	require.NoError(t, err)
	var names []string
	for _, f := range faults {
		names = append(names, f.Name())
	}
	assert.Subset(t, names, nemesis.StorageFamilies())

	r = storageRun(t, Options{}, "ok")
	r.cl.DB.(*db.ChaosNode).Storage = nil
	faults, unavailable, err := r.pickFaults(ctx)
	require.NoError(t, err)
	for _, f := range faults {
		assert.NotContains(t, nemesis.StorageFamilies(), f.Name(), "storage faults off: not in the default mix")
	}
	for _, fam := range nemesis.StorageFamilies() {
		assert.NotContains(t, unavailable, fam, "not listed as unavailable either")
	}

	r = storageRun(t, Options{Nemesis: []string{"corrupt"}}, "ok")
	faults, _, err = r.pickFaults(ctx)
	require.NoError(t, err)
	require.Len(t, faults, 1)
	assert.Equal(t, "corrupt", faults[0].Name())
}

// test.json records the names model in force only when storage faults are
// on, and the default model by its name.
func TestStorageNamesRecorded(t *testing.T) {
	assert.Equal(t, "", (&Options{StorageNames: "ordered"}).storageNames(), "no storage faults")
	assert.Equal(t, "posix", (&Options{StorageFaults: true}).storageNames())
	assert.Equal(t, "ordered", (&Options{Nemesis: []string{"power-loss"}, StorageNames: "ordered"}).storageNames())
	assert.Equal(t, "ordered", string((&Options{StorageFaults: true, StorageNames: "ordered"}).clusterOptions().StorageNames))
}
