package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/internal/golden"
)

// opLine renders an op as the history would: its f and its JSON value.
func opLine(t *testing.T, op Op) string {
	t.Helper()
	b, err := json.Marshal(op.Value)
	require.NoError(t, err)
	return "op " + op.F + " " + string(b)
}

// The commands of a kill and of the restart that ends it, on the nodes a
// seed chooses, and on the leader.
func TestKillCommands(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := goldenCluster(fiveNodes)
	c.Leader = leaderIs("n3")
	var b strings.Builder
	step := func(op Op, err error) {
		require.NoError(t, err)
		b.WriteString(transcript(opLine(t, op), fiveNodes, fakes))
	}
	k := &Kill{Targets: []Target{TargetMinority}}
	step(k.Start(ctx, c, seeded(1)))
	step(k.Stop(ctx, c))
	k = &Kill{Targets: []Target{TargetLeader}}
	step(k.Start(ctx, c, seeded(1)))
	step(k.Stop(ctx, c))
	golden.Equal(t, "testdata/kill.golden", b.String())
}

// A kill whose target keeps answering is recorded as not observed, and so
// is one whose target did not answer before.
func TestKillEffectNotObserved(t *testing.T) {
	ctx := context.Background()
	c, d, _ := goldenCluster(fiveNodes)
	d.sticky = map[string]bool{"n2": true}
	d.silent["n4"] = true
	k := &Kill{Targets: []Target{TargetAll}, Probe: Probe{Tries: 1}}
	op, err := k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, `op kill {"nodes":["n1","n2","n3","n4","n5"],"mode":"all","effect":"not observed",`+
		`"silent_before":["n4"],"answering_after":["n2"]}`, opLine(t, op))
}

// A kill that fails on one node names the node and the fault, and still
// counts every target as killed, so that Stop restarts them all; a
// restart that fails names its node, and the fault is over anyway.
func TestKillFailures(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := goldenCluster(fiveNodes[:3])
	c.Remotes["n2"] = fakes["n2"].Remote("n2", remotetest.FailOn("kill -KILL", 1))
	k := &Kill{Targets: []Target{TargetAll}}
	op, err := k.Start(ctx, c, seeded(1))
	require.EqualError(t, err, "kill: n2: kill: exited 1: canned failure")
	assert.Equal(t, `op kill {"nodes":["n1","n2","n3"],"mode":"all"}`, opLine(t, op))

	c.Remotes["n3"] = fakes["n3"].Remote("n3", remotetest.FailOn("setsid", 1))
	op, err = k.Stop(ctx, c)
	require.EqualError(t, err, "kill: n3: start chaos-node: exited 1: canned failure")
	assert.Equal(t, `op start {"nodes":["n1","n2","n3"]}`, opLine(t, op))
	for _, n := range []string{"n1", "n2", "n3"} {
		assert.Contains(t, strings.Join(ran(fakes[n]), "\n"), "setsid /opt/chaos/chaos node --id "+n)
	}

	op, err = k.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, Op{}, op, "a second Stop has nothing to do")
}

// Two families may take the same node down (kill and power-loss pick
// their targets each on its own), and the one that ends first restarts it
// for both: the other's restart finds it running, which is no error. Any
// other failure to start still is.
func TestKillStopFindsItsNodeRestarted(t *testing.T) {
	ctx := context.Background()
	c, d, fakes := goldenCluster(fiveNodes[:3])
	k := &Kill{Targets: []Target{TargetAll}}
	_, err := k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	c.Remotes["n2"] = fakes["n2"].Remote("n2", func(call remotetest.Call) (control.Result, error) {
		if call.Kind == remotetest.Run && strings.Contains(call.Cmd, "setsid") {
			return control.Result{ExitCode: 3, Stderr: []byte("already running as pid 4242\n")}, nil
		}
		return control.Result{}, nil
	})
	d.set(fiveNodes[1], false) // power-loss's stop restarted n2
	op, err := k.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, `op start {"nodes":["n1","n2","n3"]}`, opLine(t, op))

	_, err = k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	c.Remotes["n2"] = fakes["n2"].Remote("n2", remotetest.FailOn("setsid", 1))
	_, err = k.Stop(ctx, c)
	require.EqualError(t, err, "kill: n2: start chaos-node: exited 1: canned failure")
}

// A Kill that took no node down (chaos heal's, after a controller crash)
// heals nothing: it cannot restart nodes without the run's configuration.
func TestKillHealIsANoOp(t *testing.T) {
	c, _, fakes := goldenCluster(fiveNodes)
	require.NoError(t, (&Kill{}).Heal(context.Background(), c))
	for _, f := range fakes {
		assert.Empty(t, f.Take())
	}
}

// A kill of the leader on a system that cannot tell its leader (no
// Leader capability) falls back to one node, and its op says so; so does
// one on a system that can but knows none right now (an election).
func TestKillOfTheLeaderWithoutLeaderCapability(t *testing.T) {
	c, _, fakes := goldenCluster(fiveNodes)
	k := &Kill{Targets: []Target{TargetLeader}}
	op, err := k.Start(context.Background(), c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(faultrec.Process)
	assert.Equal(t, string(TargetOne), v.Mode)
	assert.Equal(t, "leader: chaos-node cannot tell its leader (no Leader capability; a described system has it with a leader: probe); "+
		"one node instead", v.Fallback)
	require.Len(t, v.Nodes, 1)
	killed := 0
	for _, f := range fakes {
		killed += len(ran(f))
	}
	assert.Positive(t, killed, "a node was killed")
	_, err = k.Stop(context.Background(), c)
	require.NoError(t, err)

	c.Leader = func(context.Context) (string, error) { return "", errors.New("no node reports a leader") }
	for _, f := range fakes {
		f.Take()
	}
	op, err = k.Start(context.Background(), c, seeded(1))
	require.NoError(t, err, "no leader now (an election): one node instead of a refusal")
	v = op.Value.(faultrec.Process)
	assert.Equal(t, "one", v.Mode)
	assert.Equal(t, "leader: select leader: no node reports a leader; one node instead", v.Fallback)
	assert.Len(t, v.Nodes, 1)
}

// The follower behind needs the nodes' states; without them, one node.
func TestSelectTargetsFallsBackWithoutStates(t *testing.T) {
	c := &Cluster{Nodes: fiveNodes, Leader: leaderIs("n3")}
	sel, err := selectTargets(context.Background(), c, TargetBehind, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, TargetOne, sel.mode)
	assert.Len(t, sel.nodes, 1)
	assert.Contains(t, sel.fallback, "behind: the system cannot report its nodes' states")
	sel, err = selectTargets(context.Background(), c, TargetLeader, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, selection{nodes: []db.Node{fiveNodes[2]}, mode: TargetLeader}, sel, "no fallback where the role is known")
}

func TestKillAvailableNeedsARemotePerNode(t *testing.T) {
	c, _, _ := goldenCluster(fiveNodes)
	require.NoError(t, (&Kill{}).Available(context.Background(), c))
	delete(c.Remotes, "n4")
	assert.EqualError(t, (&Kill{}).Available(context.Background(), c), "kill: n4: no remote for the node's host")
}

// A restart that cannot finish leaves its node to Heal, which kills what
// may be left of it, starts it again and waits until it answers; a second
// Heal has nothing left to do.
func TestKillHealRestartsWhatStopCouldNot(t *testing.T) {
	ctx := context.Background()
	c, d, fakes := goldenCluster(fiveNodes[:3])
	k := &Kill{Targets: []Target{TargetOne}, UpTimeout: time.Millisecond}
	op, err := k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	node := op.Value.(faultrec.Process).Nodes[0]
	d.sticky = map[string]bool{node: true} // silent after the restart
	_, err = k.Stop(ctx, c)
	require.EqualError(t, err, "kill: "+node+": not answering")
	for _, f := range fakes {
		f.Take()
	}

	d.sticky = nil
	require.NoError(t, k.Heal(ctx, c))
	cmds := ran(fakes[node])
	require.Len(t, cmds, 3, "%v", cmds)
	assert.Contains(t, cmds[0], "kill -KILL")
	assert.Contains(t, cmds[1], "setsid /opt/chaos/chaos node --id "+node)
	assert.Contains(t, cmds[2], "sleep 0.2")
	for name, f := range fakes {
		if name != node {
			assert.Empty(t, f.Take(), name)
		}
	}
	require.NoError(t, k.Heal(ctx, c))
	assert.Empty(t, fakes[node].Take(), "healed: nothing to restart")
}

// Heal restarts the nodes of a kill that no Stop ended.
func TestKillHealRestartsAnActiveKill(t *testing.T) {
	ctx := context.Background()
	c, d, _ := goldenCluster(fiveNodes[:3])
	k := &Kill{Targets: []Target{TargetAll}}
	_, err := k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	require.NoError(t, k.Heal(ctx, c))
	for _, n := range fiveNodes[:3] {
		assert.NoError(t, d.Up(ctx, n))
	}
	op, err := k.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, Op{}, op, "healed: nothing to restart")
}
