package nemesis

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history/faultrec"
	"chaos/testbed"
	"chaos/testbed/bedtest"
)

// vote-restart on a system without event logs sees votes in the nodes'
// states alone: on real chaos-nodes that forget their votes (forget-vote),
// told only by their GET /status, it kills a voter right after its vote
// and sees the old leader's side elect with the voter's second vote.
// The timeouts are twice those of the other testbed tests: the voter must
// be killed between its vote and the new leader's first append (two
// delayed messages), which on a slow, loaded machine an SSH kill can miss
// at 50 ms heartbeats. An attempt also misses when the restarted voter's
// election timer fires before the old leader's (it campaigns into a term
// after its vote): about half of them here, so up to ten attempts.
func TestVoteRestartFromStatesOnTestbed(t *testing.T) {
	sys := bedtest.Require(t)
	bin := bedtest.BuildChaos(t)
	dir := filepath.Join(t.TempDir(), "tb")
	st := bedtest.Up(bedStep(t, 2*time.Minute), t, sys, testbed.Config{Dir: dir, Hosts: 3, Subnet: "10.77.233.0/24"})
	c := bedDeploy(bedStep(t, 2*time.Minute), t, dir, st, bin, 100*time.Millisecond, time.Second, "forget-vote")
	fromCaps := NewCluster(c.DB, c.Nodes, c.Remotes, c.SharedClock)
	c.States, c.Events = fromCaps.States, nil // the states, as a system without event logs has them
	f := &VoteRestart{}
	require.NoError(t, f.Available(bedStep(t, time.Minute), c))
	t.Cleanup(func() { _ = f.Heal(bedStep(t, time.Minute), c) })
	var second []string
	for attempt := 1; attempt <= 10 && len(second) == 0; attempt++ {
		ctx := bedStep(t, time.Minute)
		op, err := f.Start(ctx, c, seeded(uint64(attempt)))
		require.NoError(t, err, "attempt %d", attempt)
		v := op.Value.(faultrec.Targeted)
		t.Logf("attempt %d: %v", attempt, v)
		assert.Equal(t, votesFromStates, v.VotesFrom)
		_, err = f.Stop(ctx, c)
		require.NoError(t, err)
		second = v.SecondVotes
	}
	require.NotEmpty(t, second, "no attempt saw the voter vote again")
}
