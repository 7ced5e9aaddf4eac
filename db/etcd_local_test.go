package db

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A three-member etcd cluster through the local Remote: start, health,
// kill and restart a member, logs, stop. Needs Debian's etcd-server.
func TestEtcdLifecycleLocally(t *testing.T) {
	needLocalEtcd(t)
	nodes := []Node{{"n1", "127.0.0.65"}, {"n2", "127.0.0.66"}, {"n3", "127.0.0.67"}}
	d := &Etcd{Layout: Layout{DataDir: t.TempDir()}, Nodes: nodes, ClientPort: 2479, PeerPort: 2480}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	remotes := startLocally(ctx, t, d, nodes)
	leader, err := d.Leader(ctx, nodes)
	require.NoError(t, err, "a healthy cluster names its leader")
	require.Contains(t, []string{"n1", "n2", "n3"}, leader)
	require.NoError(t, d.Kill(ctx, remotes["n2"], nodes[1]))
	require.NoError(t, d.Start(ctx, remotes["n2"], nodes[1]))
	require.NoError(t, d.Ready(ctx, nodes[1]))

	logs := t.TempDir()
	require.NoError(t, d.CollectLogs(ctx, remotes["n2"], nodes[1], logs))
	require.FileExists(t, filepath.Join(logs, "etcd.log"))
	for _, n := range nodes {
		require.NoError(t, d.Stop(ctx, remotes[n.Name], n))
	}
}

// A real etcd's states: one leader, which Leader names too, followed by
// the others in the same term; a killed member has no state.
func TestEtcdStatesLocally(t *testing.T) {
	needLocalEtcd(t)
	nodes := []Node{{"n1", "127.0.0.68"}, {"n2", "127.0.0.69"}, {"n3", "127.0.0.70"}}
	d := &Etcd{Layout: Layout{DataDir: t.TempDir()}, Nodes: nodes, ClientPort: 2479, PeerPort: 2480}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	remotes := startLocally(ctx, t, d, nodes)
	leader, err := d.Leader(ctx, nodes)
	require.NoError(t, err)
	st, err := d.States(ctx, nodes)
	require.NoError(t, err)
	require.Len(t, st, 3)
	for _, n := range nodes {
		s := st[n.Name]
		assert.Equal(t, leader, s.Leader, n.Name)
		assert.Equal(t, st[leader].Term, s.Term, n.Name)
		assert.Positive(t, s.Commit, n.Name)
		want := RoleFollower
		if n.Name == leader {
			want = RoleLeader
		}
		assert.Equal(t, want, s.Role, n.Name)
	}
	follower := nodes[0]
	if follower.Name == leader {
		follower = nodes[1]
	}
	require.NoError(t, d.Kill(ctx, remotes[follower.Name], follower))
	st, err = d.States(ctx, nodes)
	require.NoError(t, err)
	assert.Len(t, st, 2)
	assert.NotContains(t, st, follower.Name)
}
