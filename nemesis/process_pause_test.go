package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control/remotetest"
	"chaos/internal/golden"
)

// The commands of a pause, of the resume that ends it, and of a heal,
// which sends SIGCONT to every node.
func TestPauseCommands(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := goldenCluster(fiveNodes)
	var b strings.Builder
	step := func(op Op, err error) {
		require.NoError(t, err)
		b.WriteString(transcript(opLine(t, op), fiveNodes, fakes))
	}
	p := &Pause{Targets: []Target{TargetMajority}}
	step(p.Start(ctx, c, seeded(3)))
	step(p.Stop(ctx, c))
	require.NoError(t, p.Heal(ctx, c))
	b.WriteString(transcript("heal", fiveNodes, fakes))
	golden.Equal(t, "testdata/pause.golden", b.String())
}

func TestPauseEffectNotObserved(t *testing.T) {
	c, d, _ := goldenCluster(fiveNodes)
	d.sticky = map[string]bool{"n1": true}
	c.Leader = leaderIs("n1")
	p := &Pause{Targets: []Target{TargetLeader}, Probe: Probe{Tries: 1}}
	op, err := p.Start(context.Background(), c, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, `op pause {"nodes":["n1"],"mode":"leader","effect":"not observed","answering_after":["n1"]}`, opLine(t, op))
}

// A pause whose node does not answer after SIGCONT fails naming the node,
// and a second Start while a pause is active is refused.
func TestPauseResumeThatDoesNotAnswer(t *testing.T) {
	ctx := context.Background()
	c, d, _ := goldenCluster(fiveNodes)
	p := &Pause{Targets: []Target{TargetAll}, UpTimeout: time.Millisecond}
	_, err := p.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	_, err = p.Start(ctx, c, seeded(1))
	require.EqualError(t, err, "pause: a fault is active already on [n1 n2 n3 n4 n5]")

	d.sticky = map[string]bool{"n5": true} // stays silent after SIGCONT
	op, err := p.Stop(ctx, c)
	require.EqualError(t, err, "pause: n5: not answering")
	assert.Equal(t, `op resume {"nodes":["n1","n2","n3","n4","n5"]}`, opLine(t, op))
}

// Heal sends SIGCONT to every node even when some fail, and forgets the
// active pause.
func TestPauseHealReachesEveryNode(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := goldenCluster(fiveNodes)
	p := &Pause{Targets: []Target{TargetOne}}
	_, err := p.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	for _, f := range fakes {
		f.Take()
	}
	c.Remotes["n1"] = fakes["n1"].Remote("n1", remotetest.FailOn("kill -CONT", 1))
	c.Remotes["n3"] = fakes["n3"].Remote("n3", remotetest.FailOn("kill -CONT", 1))
	err = p.Heal(ctx, c)
	require.EqualError(t, err, "pause: n1: resume: exited 1: canned failure\nn3: resume: exited 1: canned failure")
	for _, n := range fiveNodes {
		assert.Len(t, ran(fakes[n.Name]), 1, n.Name)
	}
	op, err := p.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, Op{}, op, "healed: nothing to resume")
}

// A node that did not answer before the pause (killed, say) gets SIGCONT
// but is not waited for: it would not answer.
func TestPauseDoesNotWaitForANodeSilentBefore(t *testing.T) {
	ctx := context.Background()
	c, d, fakes := goldenCluster(fiveNodes[:3])
	d.silent["n2"] = true
	d.sticky = map[string]bool{"n2": true}
	p := &Pause{Targets: []Target{TargetAll}, UpTimeout: time.Hour}
	op, err := p.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, []string{"n2"}, op.Value.(faultrec.Process).Silent)
	for _, f := range fakes {
		f.Take()
	}
	_, err = p.Stop(ctx, c)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(ran(fakes["n2"]), "\n"), "kill -CONT")
}
