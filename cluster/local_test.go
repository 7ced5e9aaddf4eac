package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
)

// Nodes names hosts n1, n2, ... by position and binds each to its host's
// address; no hosts is local mode's five.
func TestNodes(t *testing.T) {
	assert.Equal(t, []db.Node{{Name: "n1", Addr: "10.0.0.1"}, {Name: "n2", Addr: "h2"}, {Name: "n3", Addr: "fd00::3"}},
		Nodes([]string{"10.0.0.1:2222", "h2", "[fd00::3]:22"}))
	local := Nodes(nil)
	require.Len(t, local, 5)
	assert.Equal(t, db.Node{Name: "n1", Addr: "127.0.0.11"}, local[0])
	assert.Equal(t, db.Node{Name: "n5", Addr: "127.0.0.15"}, local[4])
}

// Local mode runs one to five nodes on 127.0.0.11 on; another count is
// all five.
func TestLocalAddrs(t *testing.T) {
	assert.Equal(t, []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"}, LocalAddrs(3))
	assert.Len(t, LocalAddrs(0), MaxLocalNodes)
	assert.Len(t, LocalAddrs(9), MaxLocalNodes)
}

// Close removes the local data of its own system only: a cluster whose
// system was never built ran no node, and leaves what is there (another
// run's nodes, left running for chaos heal).
func TestCloseRemovesItsOwnSystemsData(t *testing.T) {
	dir := t.TempDir()
	for _, s := range SystemNames() {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, s, "n1"), 0o755))
	}
	(&Cluster{workDir: dir}).Close(false)
	for _, s := range SystemNames() {
		assert.DirExists(t, filepath.Join(dir, s), "no system: nothing removed")
	}
	(&Cluster{workDir: dir, DB: &db.Etcd{}}).Close(false)
	assert.NoDirExists(t, filepath.Join(dir, "etcd"))
	assert.DirExists(t, filepath.Join(dir, "chaos-node"))
	(&Cluster{workDir: dir, DB: &db.ChaosNode{}}).Close(true)
	assert.DirExists(t, filepath.Join(dir, "chaos-node"), "left running: kept")
}
