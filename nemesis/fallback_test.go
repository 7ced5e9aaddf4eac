package nemesis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
	"chaos/internal/golden"
)

// Tests of what the families do on systems with fewer capabilities than
// chaos-node: no event logs (votes from the states), no fault hooks
// (iptables cuts, netem delays, no append limit or slow clocks), no
// states or leader (the families that need them say which capability is
// missing).

// withoutHooks makes fx's system one without fault hooks (etcd's, a
// described system's): each node's host simulates iptables and tc (probe
// says which kernel features it has) and runs the process commands.
func (fx *seqFixture) withoutHooks(probe string) {
	fx.c.Hooks = nil
	for _, n := range fx.c.Nodes {
		h := newNetFakeHost(fx.log, probe, "eth0")
		h.answer = func(cmd string) (control.Result, bool) {
			return control.Result{}, strings.Contains(cmd, "kill -KILL") || strings.Contains(cmd, "setsid") ||
				strings.HasPrefix(cmd, "sleep 0.2; ")
		}
		fx.c.Remotes[n.Name] = h.remote(n.Name)
	}
}

// statesVoteScript is voteScript for a system without event logs: the
// candidate campaigns in term 5 and the voter's term rises to it; with
// bug, once the voter is back, the old leader n3 leads term 5 with it.
func statesVoteScript(t *testing.T, fx *seqFixture, bug bool) (voter, candidate string) {
	_, majority := splitAround(fx.c, "n3", seeded(1))
	require.Len(t, majority, 3)
	voter, candidate = majority[0], majority[1]
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			switch {
			case elapsed >= steady+1200*time.Millisecond && bug:
				fx.states["n3"] = db.NodeState{Role: RoleLeader, Term: 5, Leader: "n3", Commit: 95, LastIndex: 96}
			case elapsed >= steady+300*time.Millisecond:
				fx.states[candidate] = db.NodeState{Role: db.RoleCandidate, Term: 5, Commit: 90, LastIndex: 90}
				fx.states[voter] = db.NodeState{Role: db.RoleFollower, Term: 5, Commit: 90, LastIndex: 90}
			}
		})
	}
	return voter, candidate
}

// Without event logs, vote-restart sees the vote in the states (a node
// whose term rose to a candidate's) and the second vote in the old
// leader's side leading that term, and says so.
func TestVoteRestartFromStates(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.c.Events = nil
	voter, candidate := statesVoteScript(t, fx, true)
	f := &VoteRestart{Pace: fx.pace()}
	var b strings.Builder
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	b.WriteString(fx.transcript("start: n3 leads term 4; the states show a vote, then n3 leading its term", op, err))
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, votesFromStates, v.VotesFrom)
	assert.Equal(t, voter, v.Voter)
	assert.Equal(t, candidate, v.VotedFor)
	assert.Equal(t, new(uint64(5)), v.VoteTerm)
	assert.Equal(t, []string{"n3"}, v.SecondVotes)
	assert.Empty(t, v.Outcome)
	op, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
	b.WriteString(fx.transcript("stop", op, err))
	golden.Equal(t, "testdata/targeted-vote-restart-states.golden", b.String())

	fx = newSeqFixture(t)
	fx.c.Events = nil
	statesVoteScript(t, fx, false)
	op, err = (&VoteRestart{Pace: fx.pace()}).Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, "no second vote seen", op.Value.(faultrec.Targeted).Outcome, "a correct voter")
}

// The states show a vote by the vote a node names, by the leader it
// follows in the new term, or by the one node campaigning in it; a node
// of the old term, or one that campaigns itself, has not voted.
func TestVoteFromStates(t *testing.T) {
	nodes := []string{"n1", "n2", "n4"}
	for _, c := range []struct {
		name string
		st   map[string]db.NodeState
		want voteSeen
		ok   bool
	}{
		{"no newer term", map[string]db.NodeState{"n1": {Term: 4}, "n2": {Role: db.RoleCandidate, Term: 4}}, voteSeen{}, false},
		{"a candidate alone", map[string]db.NodeState{"n1": {Term: 4}, "n2": {Role: db.RoleCandidate, Term: 5}}, voteSeen{}, false},
		{"a follower of the candidate's term", map[string]db.NodeState{"n1": {Role: db.RoleFollower, Term: 5},
			"n2": {Role: db.RoleCandidate, Term: 5}}, voteSeen{Node: "n1", For: "n2", Term: 5}, true},
		{"its vote", map[string]db.NodeState{"n1": {Term: 5}, "n4": {Term: 5, Vote: "n2"}}, voteSeen{Node: "n4", For: "n2", Term: 5}, true},
		{"its new leader (etcd: no roles but the leader's)", map[string]db.NodeState{"n1": {Role: db.RoleLeader, Term: 6, Leader: "n1"},
			"n2": {Role: db.RoleFollower, Term: 6, Leader: "n1"}}, voteSeen{Node: "n2", For: "n1", Term: 6}, true},
		{"terms risen, nobody known to campaign", map[string]db.NodeState{"n1": {Term: 5}, "n2": {Term: 5}}, voteSeen{}, false},
	} {
		got, ok := voteFromStates(c.st, nodes, 4)
		assert.Equal(t, c.ok, ok, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
}

// Without fault hooks figure8 cuts with iptables, delays with netem,
// writes through the system's client, and says that it could neither
// split the appends nor slow the bystanders' clocks.
func TestFigure8WithoutHooks(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.withoutHooks(netProbeNetem)
	fx.script = figure8Script
	f := &Figure8{Pace: fx.pace()}
	require.NoError(t, f.Available(ctx, fx.c))
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, noHooks, v.AppendLimit)
	assert.Equal(t, noSlowClocks, v.SlowClocks, "no hooks, and no vdso clock placed")
	assert.Nil(t, v.SplitAppends)
	assert.Equal(t, MechIPTables, v.Cut.Mechanism)
	assert.Equal(t, map[string]string{PartDelay: MechNetem}, v.Links.Mechanism)
	assert.Equal(t, &faultrec.CountOr{Count: 3}, v.LoneWrites)
	assert.Equal(t, "n1", v.FinalLeader)
	log := fx.log.take()
	assert.NotContains(t, log, " hook ")
	assert.Equal(t, 3, strings.Count(log, "n3: client write chaos-figure8=0"))
	_, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
}

// Where nothing can delay messages (no netem, no hooks, no proxy), the families
// that need delays say so; the others run on cuts by iptables. Without
// states and leader, each says which capability is missing.
func TestTargetedAvailabilityWithoutHooks(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.withoutHooks(netProbeNoNetem)
	delay := "packet: these hosts cannot perform delay: delay (netem: n1: netem: exit 2: Error: Specified qdisc kind is unknown.; " +
		"hooks: n1: no fault hooks (chaos-node has none); proxy: no place for it on the hosts (Cluster.FaultProxy is nil))"
	assert.EqualError(t, (&VoteRestart{}).Available(ctx, fx.c), "vote-restart: "+delay)
	assert.EqualError(t, (&Figure8{}).Available(ctx, fx.c), "figure8: "+delay)
	assert.EqualError(t, (&ElectionDelay{}).Available(ctx, fx.c), "election-delay: "+delay)
	require.NoError(t, (&LeaderCycle{}).Available(ctx, fx.c))

	fx.c.States, fx.c.Events = nil, nil
	require.NoError(t, (&LeaderCycle{}).Available(ctx, fx.c), "a leader is all it needs")
	assert.ErrorContains(t, (&VoteRestart{}).Available(ctx, fx.c), "no States capability")
	fx.c.Leader = nil
	assert.EqualError(t, (&LeaderCycle{}).Available(ctx, fx.c),
		"leader-cycle: chaos-node cannot tell its leader (no Leader capability; a described system has it with a leader: probe)")
}
