package nemesis

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
)

// capDB is a system that declares the capabilities caps, for the tests of
// what the families make of each one present or missing.
type capDB struct {
	db.DB
	caps db.Capabilities
}

func (d capDB) Capabilities() db.Capabilities { return d.caps }

// useSystem makes d c's system, with the capabilities d declares that
// are not bound to the cluster's nodes (see NewCluster): the tests that
// build a Cluster by hand set the others themselves.
func useSystem(c *Cluster, d db.DB) {
	caps := db.CapabilitiesOf(d)
	c.DB, c.Membership, c.FakeClocks, c.Processes, c.Peers = d, caps.Membership, caps.FakeClocks, caps.Processes, caps.Peers
}

// fakeLeader names leader, whatever the nodes.
type fakeLeader string

func (l fakeLeader) Leader(context.Context, []db.Node) (string, error) {
	if l == "" {
		return "", errors.New("no node reports a leader")
	}
	return string(l), nil
}

// fakeStates reports the same states, for the nodes asked only.
type fakeStates map[string]db.NodeState

func (f fakeStates) States(_ context.Context, nodes []db.Node) (map[string]db.NodeState, error) {
	out := map[string]db.NodeState{}
	for _, n := range nodes {
		if s, ok := f[n.Name]; ok {
			out[n.Name] = s
		}
	}
	return out, nil
}

// fakeEventLogs keeps every node's log in dir/<node>.jsonl.
type fakeEventLogs string

func (f fakeEventLogs) EventLog(n db.Node) string { return filepath.Join(string(f), n.Name+".jsonl") }

// NewCluster makes each capability the system declares a field of the
// Cluster, bound to the cluster's nodes, and leaves the others nil.
func TestNewClusterFromCapabilities(t *testing.T) {
	nodes := fiveNodes[:3]
	remotes := map[string]control.Remote{}
	for _, n := range nodes {
		remotes[n.Name] = control.NewLocal(n.Name)
	}
	bare := NewCluster(capDB{DB: &db.Etcd{}}, nodes, remotes, true)
	assert.Nil(t, bare.Leader)
	assert.Nil(t, bare.States)
	assert.Nil(t, bare.Events)
	assert.Nil(t, bare.Hooks)
	assert.Nil(t, bare.Membership)
	assert.Nil(t, bare.FakeClocks)
	assert.Nil(t, bare.Processes)
	assert.Nil(t, bare.Peers)
	assert.Nil(t, proxyPorts(bare, nodes[0]), "no Peers: every port")
	assert.Nil(t, bare.Write, "the caller gives the clients")
	assert.True(t, bare.SharedClock)
	assert.Equal(t, db.DefaultTiming(), bare.Timing)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "n2.jsonl"),
		[]byte(`{"time":"2026-11-24T15:16:27.7Z","event":"vote","node":"n2","term":5,"for":"n3"}`+"\n"), 0o644))
	hooks := &db.ChaosNodeHooks{Addrs: map[string]string{"n1": "10.0.0.1:7000"}}
	full := NewCluster(capDB{DB: &db.Etcd{}, caps: db.Capabilities{Leader: fakeLeader("n3"),
		States: fakeStates{"n1": {Role: RoleLeader, Term: 3}, "n9": {Term: 9}}, Events: fakeEventLogs(dir), Hooks: hooks,
		Timing: db.Timing{Heartbeat: 20 * time.Millisecond}, Membership: seamMembership{}, FakeClocks: seamClocks{},
		Processes: seamProcesses{}, Peers: seamPeers{}}}, nodes, remotes, false)
	ctx := context.Background()
	leader, err := full.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "n3", leader)
	st, err := full.States(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]db.NodeState{"n1": {Role: RoleLeader, Term: 3}}, st, "asked of the cluster's nodes")
	evs, err := full.Events(ctx, "n2")
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "n3", evs[0].For)
	_, err = full.Events(ctx, "n1")
	assert.ErrorContains(t, err, "n1: read events: ")
	_, err = full.Events(ctx, "n7")
	assert.EqualError(t, err, `"n7" is not a node of the cluster`)
	assert.Same(t, hooks, full.Hooks)
	assert.Equal(t, seamMembership{}, full.Membership)
	assert.Equal(t, seamClocks{}, full.FakeClocks)
	assert.Equal(t, seamProcesses{}, full.Processes)
	assert.Equal(t, seamPeers{}, full.Peers)
	assert.Equal(t, []uint16{9001, 2379}, proxyPorts(full, db.Node{Name: "n1", Addr: "10.0.0.1"}), "the peer port, then the client port (etcd's, of capDB)")
	assert.True(t, hooked(full, "n1"))
	assert.False(t, hooked(full, "n2"))
	assert.Equal(t, db.Timing{Heartbeat: 20 * time.Millisecond, ElectionTimeout: time.Second}, full.Timing,
		"what the system states, the rest from the defaults")
	assert.Equal(t, time.Second, electionOf(full, 0))
	assert.Equal(t, 300*time.Millisecond, electionOf(full, 300*time.Millisecond), "a family's own setting wins")
	assert.Equal(t, 20*time.Millisecond, heartbeatOf(full, 0))
	assert.Equal(t, float64(32), sequenceDelayMS(full, 0), "1.6 heartbeats")
}
