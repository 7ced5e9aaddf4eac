package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
)

// Test fixtures shared by the kill, pause, clock and heal tests.

// fiveNodes is the cluster of most tests.
var fiveNodes = []db.Node{{Name: "n1", Addr: "10.77.0.11"}, {Name: "n2", Addr: "10.77.0.12"},
	{Name: "n3", Addr: "10.77.0.13"}, {Name: "n4", Addr: "10.77.0.14"}, {Name: "n5", Addr: "10.77.0.15"}}

// goldenCluster is a cluster of recording fake hosts, where every call
// succeeds, over a real chaos-node DB whose Up is simulated by liveDB.
// Each node's calls are recorded apart, in the Recorder of its name.
func goldenCluster(nodes []db.Node) (*Cluster, *liveDB, map[string]*remotetest.Recorder) {
	d := &liveDB{DB: &db.ChaosNode{Binary: "/build/chaos", Upload: true, Layout: db.DefaultLayout(), Nodes: nodes},
		silent: map[string]bool{}}
	remotes := map[string]control.Remote{}
	fakes := map[string]*remotetest.Recorder{}
	for _, n := range nodes {
		fakes[n.Name] = &remotetest.Recorder{}
		remotes[n.Name] = fakes[n.Name].Remote(n.Name, nil)
	}
	return &Cluster{Nodes: nodes, Remotes: remotes, DB: d}, d, fakes
}

// transcript is what happened on every host since the last call, host by
// host in node order, after a header line: "  n1$ CMD" a command,
// "  n1: upload ..." a transfer.
func transcript(header string, nodes []db.Node, fakes map[string]*remotetest.Recorder) string {
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, n := range nodes {
		for _, c := range fakes[n.Name].Take() {
			if c.Kind == remotetest.Run {
				fmt.Fprintf(&b, "  %s$ %s\n", n.Name, c.Cmd)
			} else {
				fmt.Fprintf(&b, "  %s: %s\n", n.Name, c)
			}
		}
	}
	return b.String()
}

// ran are the commands a host ran since the last Take.
func ran(fake *remotetest.Recorder) []string { return remotetest.Cmds(fake.Take()) }

// liveDB runs the real DB's commands and simulates which nodes answer:
// Kill and Pause silence a node, Start and Resume revive it. Nodes in
// sticky keep answering whatever is done to them.
type liveDB struct {
	db.DB
	mu     sync.Mutex
	silent map[string]bool
	sticky map[string]bool
}

func (d *liveDB) set(n db.Node, silent bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.sticky[n.Name] {
		d.silent[n.Name] = silent
	}
}

func (d *liveDB) Up(_ context.Context, n db.Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.silent[n.Name] {
		return fmt.Errorf("%s: not answering", n.Name)
	}
	return nil
}

func (d *liveDB) Kill(ctx context.Context, r control.Remote, n db.Node) error {
	return d.after(d.DB.Kill(ctx, r, n), n, true)
}

func (d *liveDB) Pause(ctx context.Context, r control.Remote, n db.Node) error {
	return d.after(d.DB.Pause(ctx, r, n), n, true)
}

func (d *liveDB) Start(ctx context.Context, r control.Remote, n db.Node) error {
	return d.after(d.DB.Start(ctx, r, n), n, false)
}

func (d *liveDB) Resume(ctx context.Context, r control.Remote, n db.Node) error {
	return d.after(d.DB.Resume(ctx, r, n), n, false)
}

// after records the node's new state when the command succeeded.
func (d *liveDB) after(err error, n db.Node, silent bool) error {
	if err == nil {
		d.set(n, silent)
	}
	return err
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func leaderIs(name string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return name, nil }
}

// Tests of target selection.

func TestSelectNodesSizes(t *testing.T) {
	sizes := map[Target][]int{ // by cluster size 1..5
		TargetOne:      {1, 1, 1, 1, 1},
		TargetMajority: {1, 2, 2, 3, 3},
		TargetAll:      {1, 2, 3, 4, 5},
		TargetLeader:   {1, 1, 1, 1, 1},
		TargetMinority: {0, 1, 1, 2, 2}, // 0: an error
	}
	for target, want := range sizes {
		for n := 1; n <= 5; n++ {
			c := &Cluster{Nodes: fiveNodes[:n], Leader: leaderIs(fiveNodes[n-1].Name)}
			got, err := SelectNodes(context.Background(), c, target, seeded(1))
			if want[n-1] == 0 {
				assert.EqualError(t, err, "select minority: a cluster of 1 node has no minority")
				continue
			}
			require.NoError(t, err, "%s of %d", target, n)
			assert.Len(t, got, want[n-1], "%s of %d", target, n)
			assert.True(t, isSubsequence(got, c.Nodes), "%s of %d: %v is not in cluster order", target, n, got)
		}
	}
}

// isSubsequence reports whether sub is distinct nodes of all, in all's order.
func isSubsequence(sub, all []db.Node) bool {
	i := 0
	for _, n := range all {
		if i < len(sub) && sub[i] == n {
			i++
		}
	}
	return i == len(sub)
}

// A seed decides the choice: the same seed chooses the same nodes, and
// the choices spread over every node.
func TestSelectNodesIsDeterministicUnderASeed(t *testing.T) {
	c := &Cluster{Nodes: fiveNodes}
	pick := func(seed uint64, target Target) []string {
		got, err := SelectNodes(context.Background(), c, target, seeded(seed))
		require.NoError(t, err)
		return names(got)
	}
	assert.Equal(t, []string{"n2"}, pick(1, TargetOne))
	assert.Equal(t, []string{"n1", "n2"}, pick(1, TargetMinority))
	assert.Equal(t, []string{"n1", "n2", "n3"}, pick(1, TargetMajority))
	assert.Equal(t, []string{"n4", "n5"}, pick(2, TargetMinority))
	seen := map[string]bool{}
	for seed := range uint64(50) {
		require.Equal(t, pick(seed, TargetMinority), pick(seed, TargetMinority), "seed %d", seed)
		for _, n := range pick(seed, TargetMinority) {
			seen[n] = true
		}
	}
	assert.Len(t, seen, 5, "50 seeds chose minorities among %v only", seen)
}

func TestSelectLeader(t *testing.T) {
	ctx := context.Background()
	c := &Cluster{Nodes: fiveNodes, Leader: leaderIs("n3")}
	got, err := SelectNodes(ctx, c, TargetLeader, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, []db.Node{fiveNodes[2]}, got)

	c.Leader = func(context.Context) (string, error) { return "", errors.New("no node reports a leader") }
	_, err = SelectNodes(ctx, c, TargetLeader, seeded(1))
	assert.EqualError(t, err, "select leader: no node reports a leader")

	c.Leader = leaderIs("n9")
	_, err = SelectNodes(ctx, c, TargetLeader, seeded(1))
	assert.EqualError(t, err, `select leader: the leader "n9" is not a node of the cluster`)

	c.Leader = nil
	_, err = SelectNodes(ctx, c, TargetLeader, seeded(1))
	assert.EqualError(t, err, "select leader: the system cannot tell its leader (no Leader capability; a described system has it with a leader: probe)")
}

func TestSelectNodesBadInput(t *testing.T) {
	_, err := SelectNodes(context.Background(), &Cluster{Nodes: fiveNodes}, "most", seeded(1))
	assert.EqualError(t, err, `select nodes: unknown target "most" (want one, minority, majority, all, leader or behind)`)
	_, err = SelectNodes(context.Background(), &Cluster{}, TargetOne, seeded(1))
	assert.EqualError(t, err, "select nodes: the cluster has no nodes")
}

// eachNode reaches every node even when some fail, and joins the errors in
// node order.
func TestEachNodeCollectsEveryError(t *testing.T) {
	var mu sync.Mutex
	var visited []string
	err := eachNode(fiveNodes, func(n db.Node) error {
		mu.Lock()
		visited = append(visited, n.Name)
		mu.Unlock()
		if n.Name == "n2" || n.Name == "n4" {
			return errors.New(n.Name + " failed")
		}
		return nil
	})
	assert.EqualError(t, err, "n2 failed\nn4 failed")
	assert.ElementsMatch(t, names(fiveNodes), visited)
}
