package db

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/testbed/bedtest"
)

// needLocalEtcd skips a test that starts real etcd processes under -short
// or without etcd, and fails it in CI, where test.sh installs etcd.
func needLocalEtcd(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real processes")
	}
	if _, err := exec.LookPath("etcd"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("etcd is missing; test.sh installs it with apt-get install -y etcd-server")
		}
		t.Skip("etcd is not installed (apt-get install -y etcd-server)")
	}
}

// startLocally installs and starts nodes of d through local Remotes,
// stopped when the test ends, and waits until each is ready.
func startLocally(ctx context.Context, t *testing.T, d DB, nodes []Node) map[string]control.Remote {
	t.Helper()
	remotes := map[string]control.Remote{}
	for _, n := range nodes {
		remotes[n.Name] = control.NewLocal(n.Name)
		require.NoError(t, d.Install(ctx, remotes[n.Name], n))
		require.NoError(t, d.Start(ctx, remotes[n.Name], n))
		t.Cleanup(func() { _ = d.Stop(context.Background(), remotes[n.Name], n) })
	}
	for _, n := range nodes {
		require.NoError(t, d.Ready(ctx, n))
	}
	return remotes
}

// memberCycle removes nodes[2] through nodes[0], kills it, adds it back
// as a new member, rejoins it with its data wiped and promotes it once it
// caught up: what the member nemesis does, on a real cluster.
func memberCycle(t *testing.T, d interface {
	DB
	Membership
}, nodes []Node) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	remotes := startLocally(ctx, t, d, nodes)
	via, victim := nodes[0], nodes[2]
	// Ready says a node answers, not that its cluster has elected a
	// leader, and only the leader says the membership.
	var voters, learners []string
	require.Eventually(t, func() bool {
		var err error
		voters, learners, err = d.Members(ctx, via)
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "the members, once a leader is elected")
	require.ElementsMatch(t, []string{"n1", "n2", "n3"}, voters)
	require.Empty(t, learners)

	// etcd refuses a removal until the members have been connected for a
	// while ("unhealthy cluster"): callers retry, as the nemesis does.
	require.Eventually(t, func() bool { return d.RemoveMember(ctx, via, victim) == nil },
		30*time.Second, 200*time.Millisecond, "n3 removed")
	require.NoError(t, d.Kill(ctx, remotes[victim.Name], victim))
	require.Eventually(t, func() bool {
		voters, _, err := d.Members(ctx, nodes[1])
		return err == nil && len(voters) == 2
	}, 20*time.Second, 50*time.Millisecond, "n3 removed")
	require.NoError(t, d.RemoveMember(ctx, via, victim), "removing a non-member is no error")

	// The add can time out while n1 and n2 elect a leader (n3 may have led
	// them); callers retry, and a retry of a change that went through is a
	// no-op.
	require.Eventually(t, func() bool { return d.AddMember(ctx, via, victim) == nil },
		30*time.Second, 200*time.Millisecond, "n3 added")
	_, learners, err := d.Members(ctx, via)
	require.NoError(t, err)
	require.Equal(t, []string{"n3"}, learners, "added back as a learner")
	require.NoError(t, d.AddMember(ctx, via, victim), "adding a member is no error")
	require.NoError(t, d.Rejoin(ctx, remotes[victim.Name], victim))
	require.Eventually(t, func() bool { return d.Promote(ctx, via, victim) == nil },
		30*time.Second, 100*time.Millisecond, "n3 promoted once caught up")
	// etcd answers from what nodes[1] applied, which may lag the promotion.
	require.Eventually(t, func() bool {
		voters, learners, err := d.Members(ctx, nodes[1])
		slices.Sort(voters)
		return err == nil && slices.Equal(voters, []string{"n1", "n2", "n3"}) && len(learners) == 0
	}, 20*time.Second, 50*time.Millisecond, "n3 a voter, as nodes[1] has it")

	// A restart after the rejoin is the same member.
	require.NoError(t, d.Kill(ctx, remotes[victim.Name], victim))
	require.NoError(t, d.Start(ctx, remotes[victim.Name], victim))
	require.NoError(t, d.Ready(ctx, victim))
}

func TestChaosNodeMembershipLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	nodes := []Node{{"n1", "127.0.0.71"}, {"n2", "127.0.0.72"}, {"n3", "127.0.0.73"}}
	memberCycle(t, &ChaosNode{Binary: bedtest.BuildChaos(t), Layout: Layout{DataDir: t.TempDir()}, Nodes: nodes,
		ClientPort: 7600, PeerPort: 7601, Heartbeat: 20 * time.Millisecond, Election: 200 * time.Millisecond}, nodes)
}

func TestEtcdMembershipLocally(t *testing.T) {
	needLocalEtcd(t)
	nodes := []Node{{"n1", "127.0.0.75"}, {"n2", "127.0.0.76"}, {"n3", "127.0.0.77"}}
	memberCycle(t, &Etcd{Layout: Layout{DataDir: t.TempDir()}, Nodes: nodes, ClientPort: 2479, PeerPort: 2480}, nodes)
}
