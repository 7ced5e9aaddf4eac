package cluster

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
	"chaos/workload"
)

// Every entry builds a system of its own name, whose client NewClient
// finds by that name.
func TestEverySystemIsOneEntry(t *testing.T) {
	nodes := Nodes([]string{"10.0.0.11", "10.0.0.12", "10.0.0.13"})
	for _, s := range Systems() {
		d, err := Open(s.Name, db.Config{Nodes: nodes, Layout: db.DefaultLayout()})
		require.NoError(t, err, s.Name)
		assert.Equal(t, s.Name, d.Name())
		cl, err := NewClient(d, nodes[0], ReadSerializable)
		require.NoError(t, err, s.Name)
		require.NoError(t, cl.Close())
		desc, err := Lookup(s.Name)
		require.NoError(t, err)
		assert.Nil(t, desc, "a built-in system has no description")
	}
	assert.Equal(t, []string{"chaos-node", "etcd"}, SystemNames())
}

// A name that is neither a system nor a description file is refused with
// the list of systems; a description file is loaded.
func TestLookup(t *testing.T) {
	_, err := Lookup("mongo")
	var unknown *UnknownSystemError
	require.ErrorAs(t, err, &unknown)
	assert.EqualError(t, err, `--db "mongo": want chaos-node or etcd, or a description file (PATH.yaml, see examples/systems)`)
	_, err = Open("mongo", db.Config{})
	require.ErrorAs(t, err, &unknown)

	path := filepath.Join("..", "examples", "systems", "etcd.yaml")
	desc, err := Lookup(path)
	require.NoError(t, err)
	require.NotNil(t, desc)
	nodes := Nodes([]string{"10.0.0.11"})
	d, err := Open(path, db.Config{Nodes: nodes})
	require.NoError(t, err)
	assert.Equal(t, "etcd", d.Name(), "a description may take a built-in system's name")
	cl, err := NewClient(d, nodes[0], ReadLinearizable)
	require.NoError(t, err)
	assert.IsType(t, &workload.HTTPTemplateClient{}, cl, "its client is the description's, not the built-in one's")
	require.NoError(t, cl.Close())
}

// The facts of the entries: chaos-node runs in local mode and has planted
// bugs, etcd neither; Open refuses bugs for a system without them, naming
// it and those that have them.
func TestRegistryFacts(t *testing.T) {
	assert.Equal(t, []string{"chaos-node"}, SystemNamesWhere(func(s System) bool { return s.LocalMode }))
	assert.Equal(t, []string{"chaos-node"}, SystemNamesWhere(func(s System) bool { return s.Bugs }))
	nodes := Nodes([]string{"10.0.0.11"})
	_, err := Open("etcd", db.Config{Nodes: nodes, Bugs: []string{"stale-read"}})
	assert.EqualError(t, err, "etcd has no planted bugs (--bug is for chaos-node)")
	_, err = Open("chaos-node", db.Config{Nodes: nodes, Bugs: []string{"stale-read"}})
	require.NoError(t, err)
	s, ok := SystemNamed("etcd")
	require.True(t, ok)
	assert.Equal(t, "etcd", s.Name)
	_, ok = SystemNamed("../examples/systems/etcd.yaml")
	assert.False(t, ok, "a description file is no entry")
}

// A registry with one more entry opens that system by name and refuses a
// name it lacks, naming its own systems; Systems is left as it was.
func TestARegistryEntryIsAllASystemNeeds(t *testing.T) {
	opened := false
	reg := append(Systems(), System{Name: "fake", New: func(cfg db.Config) (db.DB, error) {
		opened = true
		return nil, nil
	}})
	_, err := reg.Open("fake", db.Config{})
	require.NoError(t, err)
	assert.True(t, opened)
	_, err = reg.Open("nope", db.Config{})
	assert.EqualError(t, err, `--db "nope": want chaos-node or etcd or fake, or a description file (PATH.yaml, see examples/systems)`)
	_, err = Open("fake", db.Config{})
	assert.EqualError(t, err, `--db "fake": want chaos-node or etcd, or a description file (PATH.yaml, see examples/systems)`)
}
