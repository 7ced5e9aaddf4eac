package nemesis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
	"chaos/history"
	"chaos/history/faultrec"
	"chaos/internal/golden"
)

// Tests of the targeted faults against fake hosts and hooks (see
// targeted_fake_test.go): the commands and hook requests each issues, the
// roles it picks, what its op records, and that Stop and Heal undo it.
// Golden transcripts: CHAOS_UPDATE_GOLDEN=1 go test ./nemesis -run Targeted.

// steady is how long a sequence waits before its first step for the
// leader to have led an election timeout (see awaitLeader): the scripts'
// times count from the start, that wait included.
const steady = 500 * time.Millisecond

// The leader's clock is slowed, then the leader is cut off; once another
// node leads, the cut holds for the lease's length on the slow clock, then
// is healed and the clock reset. Stop has nothing left; Heal clears every
// node.
func TestTargetedLease(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		if elapsed >= steady+700*time.Millisecond {
			fx.set(func() { fx.leader = "n1" })
		}
	}
	l := &Lease{Pace: fx.pace()}
	var b strings.Builder
	op, err := l.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	b.WriteString(fx.transcript("start: n3 leads, n1 from 700ms", op, err))
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, "n3", v.Leader)
	assert.Equal(t, "n1", v.NewLeader)
	assert.Equal(t, new(int64(700+4000)), v.HeldMS, "a 500ms lease at rate 0.1 or 0.05 lasts 5 s or more: held for leaseHold")
	_, err = l.Start(ctx, fx.c, seeded(1))
	require.EqualError(t, err, "lease: a fault is active already; stop it first")
	op, err = l.Stop(ctx, fx.c)
	requireHealed(t, err)
	b.WriteString(fx.transcript("stop", op, err))
	op, err = l.Stop(ctx, fx.c)
	require.NoError(t, err)
	assert.Equal(t, Op{}, op, "a second Stop has nothing to do")
	b.WriteString(fx.transcript("heal", Op{}, l.Heal(ctx, fx.c)))
	golden.Equal(t, "testdata/targeted-lease.golden", b.String())
}

// The leader is cut off; once another node leads, the cut is healed and
// the new leader killed, then restarted once a third leads. Without a new
// leader within ten election timeouts, nothing is killed.
func TestTargetedLeaderCycle(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			switch {
			case elapsed >= steady+1000*time.Millisecond:
				fx.leader = "n4"
			case elapsed >= steady+600*time.Millisecond:
				fx.leader = "n1"
			}
		})
	}
	l := &LeaderCycle{Pace: fx.pace()}
	var b strings.Builder
	op, err := l.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	b.WriteString(fx.transcript("start: n3 leads, then n1 from 600ms, n4 from 1s", op, err))
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, faultrec.Targeted{Isolated: "n3", NewLeader: "n1", Killed: "n1", NextLeader: "n4",
		WaitedMS: new(int64(600))}, v)
	require.NoError(t, fx.d.Up(ctx, fiveNodes[0]), "n1 is up again")
	op, err = l.Stop(ctx, fx.c)
	requireHealed(t, err)
	b.WriteString(fx.transcript("stop", op, err))

	fx.script = nil
	op, err = l.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	b.WriteString(fx.transcript("start: n4 leads and goes on leading", op, err))
	assert.Equal(t, "no new leader", op.Value.(faultrec.Targeted).Outcome)
	op, err = l.Stop(ctx, fx.c)
	requireHealed(t, err)
	b.WriteString(fx.transcript("stop", op, err))
	golden.Equal(t, "testdata/targeted-leader-cycle.golden", b.String())
}

// A restart that fails leaves the node to Stop (or Heal), which restarts
// it.
func TestTargetedLeaderCycleStopRestarts(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		if elapsed > steady {
			fx.set(func() { fx.leader = "n2" })
		}
	}
	fx.c.Remotes["n2"] = fx.log.Remote("n2", seqAnswer("setsid"))
	l := &LeaderCycle{Pace: fx.pace()}
	_, err := l.Start(ctx, fx.c, seeded(1))
	require.ErrorContains(t, err, "leader-cycle: n2: start chaos-node: exited 1")
	require.Error(t, fx.d.Up(ctx, fiveNodes[1]))
	fx.c.Remotes["n2"] = fx.log.Remote("n2", seqAnswer(""))
	_, err = l.Stop(ctx, fx.c)
	require.NoError(t, err)
	require.NoError(t, fx.d.Up(ctx, fiveNodes[1]))
	require.NoError(t, l.Heal(ctx, fx.c))
	out := fx.log.take()
	for _, n := range fiveNodes {
		assert.Contains(t, out, n.Name+": hook DELETE /faults/partition")
		assert.Contains(t, out, n.Name+": hook DELETE /faults/clock")
	}
}

// voteScript is the election the vote-restart tests play: the leader n3
// (term 4) and, with seed 1, one more node are cut off; 300ms later the
// first node of the majority votes for the second in term 5; with bug,
// 1.2s in, after its restart, it votes in term 5 again, for n3.
func voteScript(t *testing.T, fx *seqFixture, bug bool) (voter, candidate string) {
	_, majority := splitAround(fx.c, "n3", seeded(1))
	require.Len(t, majority, 3)
	voter, candidate = majority[0], majority[1]
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			switch {
			case elapsed >= steady+1200*time.Millisecond && bug && len(fx.events[voter]) == 1:
				fx.vote(voter, "n3", 5)
			case elapsed >= steady+300*time.Millisecond && len(fx.events[voter]) == 0:
				fx.vote(voter, candidate, 5)
			}
		})
	}
	return voter, candidate
}

// The majority's links are slowed, the leader's side cut off; the first
// voter of the new term is killed, moved to the leader's side and
// restarted; its second vote in that term is recorded.
func TestTargetedVoteRestart(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	voter, candidate := voteScript(t, fx, true)
	f := &VoteRestart{Pace: fx.pace()}
	var b strings.Builder
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	b.WriteString(fx.transcript("start: n3 leads term 4; a voter forgets its vote", op, err))
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, voter, v.Voter)
	assert.Equal(t, candidate, v.VotedFor)
	assert.Equal(t, new(uint64(5)), v.VoteTerm)
	assert.Equal(t, []string{"n3"}, v.SecondVotes)
	assert.Empty(t, v.Outcome)
	op, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
	b.WriteString(fx.transcript("stop", op, err))
	golden.Equal(t, "testdata/targeted-vote-restart.golden", b.String())
}

// A voter that keeps its promise votes once: the sequence waits ten
// election timeouts for a second vote and says it saw none.
func TestTargetedVoteRestartCorrectVoter(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	voteScript(t, fx, false)
	f := &VoteRestart{Pace: fx.pace()}
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, []string{}, v.SecondVotes)
	assert.Equal(t, "no second vote seen", v.Outcome)
	_, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
}

// Without a vote in time, nobody is killed and the cut stays for Stop.
func TestTargetedVoteRestartNoVote(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	f := &VoteRestart{Pace: fx.pace()}
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, "no vote seen", op.Value.(faultrec.Targeted).Outcome)
	assert.NotContains(t, fx.log.take(), "kill")
	op, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
	assert.Equal(t, "stop-vote-restart", op.F)
}

// Every link is delayed by 1.5 to 2 heartbeats; then round by round the
// leader is cut off until another leads, and rejoins. A round without a
// new leader within twenty election timeouts ends the sequence; the cut and
// the links are healed within Start, and Stop has nothing left.
func TestTargetedElectionDelay(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			switch {
			case elapsed >= steady+1200*time.Millisecond:
				fx.leader = "n4"
				fx.states["n4"] = db.NodeState{Role: RoleLeader, Term: 7, Leader: "n4", Commit: 95, LastIndex: 95}
			case elapsed >= steady+400*time.Millisecond:
				fx.leader = "n1"
				fx.states["n1"] = db.NodeState{Role: RoleLeader, Term: 5, Leader: "n1", Commit: 95, LastIndex: 95}
			}
		})
	}
	e := &ElectionDelay{Pace: fx.pace()}
	var b strings.Builder
	op, err := e.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	b.WriteString(fx.transcript("start: n3 leads, n1 from 400ms, n4 from 1.2s, then n4 goes on leading", op, err))
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, "n3", v.Leader)
	assert.InDelta(t, 87.5, *v.DelayMS, 12.5, "1.5 to 2 heartbeats of 50ms")
	assert.Equal(t, []faultrec.Round{
		{Isolated: "n3", Term: 4, Terms: new(uint64(1)), WaitedMS: new(int64(400)), NextLeader: "n1"},
		{Isolated: "n1", Term: 5, Terms: new(uint64(2)), WaitedMS: new(int64(800)), NextLeader: "n4"},
		{Isolated: "n4", Term: 7, Terms: new(uint64(0)), WaitedMS: new(int64(10000))},
	}, v.Rounds)
	assert.Equal(t, "no new leader within twenty election timeouts", v.Outcome)
	op, err = e.Stop(ctx, fx.c)
	requireHealed(t, err)
	b.WriteString(fx.transcript("stop", op, err))
	golden.Equal(t, "testdata/targeted-election-delay.golden", b.String())
}

// figure8Script plays Figure 8's roles: n3 leads term 4 with 5 entries of
// its own; n1 leads term 5 from 400 ms, n3 term 6 from 1 s, n1 term 7
// from 1.5 s.
func figure8Script(fx *seqFixture, elapsed time.Duration) {
	fx.set(func() {
		switch {
		case elapsed >= steady+1500*time.Millisecond:
			fx.states["n3"] = db.NodeState{Role: "follower", Term: 6, Commit: 92, LastIndex: 96}
			fx.states["n1"] = db.NodeState{Role: RoleLeader, Term: 7, Leader: "n1", Commit: 92, LastIndex: 92}
		case elapsed >= steady+time.Second:
			fx.states["n3"] = db.NodeState{Role: RoleLeader, Term: 6, Leader: "n3", Commit: 92, LastIndex: 96}
		case elapsed >= steady+400*time.Millisecond:
			fx.states["n3"] = db.NodeState{Role: "follower", Term: 4, Commit: 90, LastIndex: 95}
			fx.states["n1"] = db.NodeState{Role: RoleLeader, Term: 5, Leader: "n1", Commit: 90, LastIndex: 91}
		}
	})
}

// Figure 8: the leader alone, the next leader alone the moment it leads,
// the first re-elected, cut off again once it committed its lone entry.
func TestTargetedFigure8(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.script = figure8Script
	f := &Figure8{Pace: fx.pace()}
	var b strings.Builder
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	b.WriteString(fx.transcript("start: n3 leads term 4 with 5 entries of its own", op, err))
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, "n1", v.SecondLeader)
	assert.Equal(t, new(uint64(91)), v.Index)
	assert.Equal(t, new(uint64(5)), v.LoneEntries)
	assert.Equal(t, new(uint64(6)), v.ReelectedTerm)
	assert.Equal(t, "n1", v.FinalLeader)
	assert.Equal(t, []string{"n5"}, v.CutWithLeader, "n1 needs n2's and n4's votes, not a third bystander's")
	assert.Empty(t, v.Outcome)
	op, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
	b.WriteString(fx.transcript("stop", op, err))
	golden.Equal(t, "testdata/targeted-figure8.golden", b.String())
}

// A first leader re-elected whose commit index never reaches its lone
// entries (90 < 91 here) ends the sequence there, saying so: the last step
// would test nothing, and the op says how far it came.
func TestFigure8ReelectedWithoutCommit(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		figure8Script(fx, min(elapsed, steady+time.Second+100*time.Millisecond))
		if elapsed >= steady+time.Second {
			fx.set(func() {
				fx.states["n3"] = db.NodeState{Role: RoleLeader, Term: 6, Leader: "n3", Commit: 90, LastIndex: 96}
			})
		}
	}
	f := &Figure8{Pace: fx.pace()}
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, "the first leader did not commit its lone entries", v.Outcome)
	assert.Equal(t, new(uint64(6)), v.ReelectedTerm)
	assert.Equal(t, new(uint64(90)), v.Commit)
	assert.Empty(t, v.FinalLeader, "no last step")
	_, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
}

// Figure 8 (d): the new leader keeps just enough bystanders for a
// majority, those with the shortest logs; the rest go with the old leader.
func TestFigure8FinalSides(t *testing.T) {
	st := map[string]db.NodeState{"n1": {LastIndex: 91}, "n2": {LastIndex: 97}, "n4": {LastIndex: 95}, "n5": {LastIndex: 96}}
	voters, away := finalSides(st, "n1", []string{"n2", "n4", "n5"}, 5)
	assert.Equal(t, []string{"n1", "n4", "n5"}, voters)
	assert.Equal(t, []string{"n2"}, away, "the longest log, likeliest to hold the old leader's new entry")
	voters, away = finalSides(st, "n1", []string{"n2"}, 3)
	assert.Equal(t, []string{"n1", "n2"}, voters)
	assert.Empty(t, away, "three nodes: the one bystander is needed")
	voters, away = finalSides(st, "n1", []string{"n2", "n4", "n5", "n6", "n7"}, 7)
	assert.Len(t, voters, 4)
	assert.Len(t, away, 2)
}

// The targeted faults say what they lack: roles, states.
func TestTargetedAvailability(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	for _, f := range []Fault{&Lease{}, &VoteRestart{}, &Figure8{}, &ElectionDelay{}, &LeaderCycle{}} {
		require.NoError(t, f.Available(ctx, fx.c), f.Name())
	}
	fx.c.Events = nil
	require.NoError(t, (&VoteRestart{}).Available(ctx, fx.c), "without event logs, votes show in the states")
	fx.c.States = nil
	assert.EqualError(t, (&VoteRestart{}).Available(ctx, fx.c),
		"vote-restart: chaos-node cannot report its nodes' states (no States capability; a described system has it with a state: probe)")
	assert.EqualError(t, (&Figure8{}).Available(ctx, fx.c),
		"figure8: chaos-node cannot report its nodes' states (no States capability; a described system has it with a state: probe)")
	fx.c.Leader = nil
	assert.EqualError(t, (&Lease{}).Available(ctx, fx.c),
		"lease: chaos-node cannot tell its leader (no Leader capability; a described system has it with a leader: probe)")
	fx.c.Nodes = fiveNodes[:2]
	assert.EqualError(t, (&LeaderCycle{}).Available(ctx, fx.c), "leader-cycle: needs at least 3 nodes, the cluster has 2")
}

// Where the nodes have no hooks, the cut is iptables rules in the
// targeted chain; a reshape adds the new rules before it deletes the old,
// and heal leaves no chain or rule.
func TestTargetedCutByIPTables(t *testing.T) {
	ctx := context.Background()
	log := &netLog{}
	c := netCluster("10.77.0", 3)
	hosts := netSeparateHosts(c, log, netProbeNoNetem)
	var n netCut
	require.NoError(t, n.set(ctx, c, grudgeIsolate(partitionNames(c.Nodes), "n3")))
	require.NoError(t, n.set(ctx, c, sides([]string{"n3", "n1"}, []string{"n2"})))
	assert.Equal(t, []string{"-A INPUT -j CHAOS-TARGET", "-A CHAOS-TARGET -s 10.77.0.12/32 -d 10.77.0.13/32 -j DROP"}, hosts["n3"].rules)
	assert.Equal(t, []string{"-A INPUT -j CHAOS-TARGET", "-A CHAOS-TARGET -s 10.77.0.12/32 -d 10.77.0.11/32 -j DROP"}, hosts["n1"].rules)
	assert.Equal(t, []string{"-A INPUT -j CHAOS-TARGET", "-A CHAOS-TARGET -s 10.77.0.13/32 -d 10.77.0.12/32 -j DROP",
		"-A CHAOS-TARGET -s 10.77.0.11/32 -d 10.77.0.12/32 -j DROP"}, hosts["n2"].rules)
	require.NoError(t, n.heal(ctx, c))
	for name, h := range hosts {
		require.Empty(t, h.chains, "%s left a chain", name)
		require.Empty(t, h.rules, "%s left a rule", name)
	}
	golden.Equal(t, "testdata/targeted-cut-iptables.golden", log.take())
}

// Every targeted family's Heal, with no fault of its own, clears every
// node: the cut on both mechanisms, hook network faults and clocks.
func TestTargetedHealReachesEveryNode(t *testing.T) {
	ctx := context.Background()
	for _, f := range []Fault{&Lease{}, &VoteRestart{}, &Figure8{}, &ElectionDelay{}, &LeaderCycle{}} {
		fx := newSeqFixture(t)
		require.NoError(t, f.Heal(ctx, fx.c), f.Name())
		out := fx.log.take()
		for _, n := range fiveNodes {
			for _, want := range []string{"hook DELETE /faults/partition", "hook DELETE /faults/net", "hook DELETE /faults/clock", "iptables -w -S"} {
				assert.Contains(t, out, n.Name+": "+want, "%s on %s", f.Name(), n.Name)
			}
		}
	}
}

// TargetBehind picks the follower with the shortest log; a kill aimed at
// it kills that node.
func TestTargetBehindPicksTheShortestLog(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.set(func() {
		fx.states["n4"] = db.NodeState{Role: "follower", Term: 4, Leader: "n3", Commit: 80, LastIndex: 81}
		fx.states["n2"] = db.NodeState{Role: "follower", Term: 4, Leader: "n3", Commit: 85, LastIndex: 85}
	})
	nodes, err := SelectNodes(ctx, fx.c, TargetBehind, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, []string{"n4"}, names(nodes))
	k := &Kill{Targets: []Target{TargetBehind}}
	op, err := k.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, []string{"n4"}, op.Value.(faultrec.Process).Nodes)
	_, err = k.Stop(ctx, fx.c)
	require.NoError(t, err)
	fx.c.States = nil
	_, err = SelectNodes(ctx, fx.c, TargetBehind, seeded(1))
	assert.EqualError(t, err, "select behind: chaos-node cannot report its nodes' states (no States capability; a described system has it with a state: probe)")
}

// After a controller crash, `chaos heal` removes a targeted cut through
// the partition family's Heal, which removes the target chain too.
func TestTargetedCutHealedByPartition(t *testing.T) {
	ctx := context.Background()
	c := netCluster("10.77.0", 3)
	hosts := netSeparateHosts(c, &netLog{}, netProbeNoNetem)
	var n netCut
	require.NoError(t, n.set(ctx, c, grudgeIsolate(partitionNames(c.Nodes), "n1")))
	require.NotEmpty(t, hosts["n1"].rules)
	require.NoError(t, (&Partition{}).Heal(ctx, c))
	for name, h := range hosts {
		require.Empty(t, h.chains, "%s left a chain", name)
		require.Empty(t, h.rules, "%s left a rule", name)
	}
}

// When the majority's first round splits (the first vote seen is in a term
// the leader's side cannot campaign into), the sequence heals, waits for a
// leader, and provokes another election.
func TestTargetedVoteRestartRetriesAfterASplit(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	rng := seeded(1)
	_, first := splitAround(fx.c, "n3", rng)
	_, second := splitAround(fx.c, "n3", rng)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			switch {
			case elapsed >= steady+900*time.Millisecond && fx.states["n3"].Term == 7 && len(fx.events[second[0]]) < 2:
				fx.vote(second[0], second[1], 8)
			case elapsed >= steady+600*time.Millisecond && fx.states["n3"].Term == 4:
				fx.states["n3"] = db.NodeState{Role: RoleLeader, Term: 7, Leader: "n3", Commit: 99, LastIndex: 99}
			case elapsed >= steady+300*time.Millisecond && len(fx.events[first[0]]) == 0:
				fx.vote(first[0], first[1], 7)
			}
		})
	}
	f := &VoteRestart{Pace: fx.pace()}
	op, err := f.Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(faultrec.Targeted)
	assert.Equal(t, []uint64{7}, v.SplitTerms)
	assert.Equal(t, new(uint64(7)), v.Term)
	assert.Equal(t, new(uint64(8)), v.VoteTerm)
	assert.Equal(t, second[0], v.Voter)
	assert.Equal(t, "no second vote seen", v.Outcome)
	_, err = f.Stop(ctx, fx.c)
	requireHealed(t, err)
}

// Two targeted cuts through the hooks compose: every node drops the union
// of both, and stopping one leaves the other in place.
func TestTargetedCutsCompose(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	a, b := netCut{owner: "a"}, netCut{owner: "b"}
	require.NoError(t, a.set(ctx, fx.c, grudgeIsolate(partitionNames(fiveNodes), "n1")))
	fx.log.take()
	require.NoError(t, b.set(ctx, fx.c, grudgeIsolate(partitionNames(fiveNodes), "n2")))
	assert.Equal(t, `n1: hook POST /faults/partition {"drop":["n2","n3","n4","n5"]}
n2: hook POST /faults/partition {"drop":["n1","n3","n4","n5"]}
n3: hook POST /faults/partition {"drop":["n1","n2"]}
n4: hook POST /faults/partition {"drop":["n1","n2"]}
n5: hook POST /faults/partition {"drop":["n1","n2"]}
`, fx.log.take())
	require.NoError(t, a.stop(ctx, fx.c))
	assert.Equal(t, `n1: hook POST /faults/partition {"drop":["n2"]}
n2: hook POST /faults/partition {"drop":["n1","n3","n4","n5"]}
n3: hook POST /faults/partition {"drop":["n2"]}
n4: hook POST /faults/partition {"drop":["n2"]}
n5: hook POST /faults/partition {"drop":["n2"]}
`, fx.log.take())
	require.NoError(t, b.stop(ctx, fx.c))
	assert.Equal(t, `n1: hook POST /faults/partition {"drop":[]}
n2: hook POST /faults/partition {"drop":[]}
n3: hook POST /faults/partition {"drop":[]}
n4: hook POST /faults/partition {"drop":[]}
n5: hook POST /faults/partition {"drop":[]}
`, fx.log.take())
}

// A sequence that moves a majority across a cut needs every node: with one
// down past its restart bound it does nothing and says why, and how many
// probes missed; the faults that act on the leader leave the node down out.
func TestTargetedFaultsWithANodeDown(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.d.silent["n5"] = true
	op, err := (&VoteRestart{Pace: fx.pace(), UpTimeout: 2 * time.Second}).Start(ctx, fx.c, seeded(1))
	assert.EqualError(t, err, "vote-restart: needs every node answering; n5 do not (killed or paused) after 9 probes in 2s")
	var probe *ProbeError
	require.ErrorAs(t, err, &probe)
	assert.Equal(t, 9, probe.Misses, "every 250 ms from 0 to 2 s")
	assert.Equal(t, Op{}, op)
	_, err = (&Figure8{Pace: fx.pace()}).Start(ctx, fx.c, seeded(1))
	assert.EqualError(t, err, "figure8: needs every node answering; n5 do not (killed or paused) after 41 probes in 10s")
	assert.Equal(t, "\n", fx.log.take(), "nothing done")

	op, err = (&Lease{Pace: fx.pace()}).Start(ctx, fx.c, seeded(1))
	require.NoError(t, err)
	assert.Equal(t, &faultrec.Partition{Mechanism: "hooks", Grudge: map[string][]string{"n1": {"n3"}, "n2": {"n3"},
		"n3": {"n1", "n2", "n4"}, "n4": {"n3"}}}, op.Value.(faultrec.Targeted).Cut)
	out := fx.log.take()
	assert.NotContains(t, out, `n5: hook POST /faults/partition {"drop":["n3"]}`, "n5 is left out of the cut")
	assert.Contains(t, out, `n5: hook POST /faults/partition {"drop":[]}`, "the heal resets every node that may answer")
	fx.set(func() { fx.leader = "n5" })
	_, err = (&ElectionDelay{Pace: fx.pace()}).Start(ctx, fx.c, seeded(1))
	assert.EqualError(t, err, "election-delay: the leader n5 does not answer")
}

// chaos heal puts back every node's append limit through figure8's
// healer, and does nothing else.
func TestFigure8HealerResetsAppendLimits(t *testing.T) {
	g, _, fakes := goldenCluster(fiveNodes[:2])
	hc, hooks := hookCluster(t, fiveNodes[:2])
	g.Hooks = hc.Hooks
	healers := figure8Healers(true)
	require.Len(t, healers, 1)
	require.NoError(t, HealAll(context.Background(), g, healers))
	for _, n := range fiveNodes[:2] {
		assert.Empty(t, fakes[n.Name].Take(), "no host command")
		assert.Equal(t, []string{"DELETE /faults/append"}, hooks[n.Name].take())
	}
}

// A sequence aims at a steady leader: one named for an election timeout.
// Leaders that change every 300ms are passed over until one stays; with
// no leader for ten election timeouts the sequence does nothing and says
// why.
func TestTargetedFaultsWaitForASteadyLeader(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			switch {
			case elapsed >= 1200*time.Millisecond:
				fx.leader = "n2"
			case elapsed >= 900*time.Millisecond:
				fx.leader = "n1"
			case elapsed >= 600*time.Millisecond:
				fx.leader = ""
			case elapsed >= 300*time.Millisecond:
				fx.leader = "n4"
			}
		})
	}
	leader, err := awaitLeader(ctx, fx.c, fx.pace(), 0)
	require.NoError(t, err)
	assert.Equal(t, "n2", leader)
	assert.Equal(t, 1700*time.Millisecond, fx.now().Sub(time.Unix(0, 0)), "n2 from 1.2s, steady 500ms later")

	fx = newSeqFixture(t)
	fx.set(func() { fx.leader = "" })
	op, err := (&LeaderCycle{Pace: fx.pace()}).Start(ctx, fx.c, seeded(1))
	assert.EqualError(t, err, "leader-cycle: select leader: no node reports a leader")
	assert.Equal(t, Op{}, op)
	assert.Equal(t, 5*time.Second, fx.now().Sub(time.Unix(0, 0)), "ten election timeouts")
	assert.Equal(t, "\n", fx.log.take(), "nothing done")
}

// A node that misses a probe (restarting after another fault, or slow to
// answer its state under load) is probed again within the restart bound:
// the sequence goes on once it answers, and records how many probes
// missed; the schedule records them, and a refusal's, in the history.
func TestTargetedProbeMissesAreRetriedAndRecorded(t *testing.T) {
	ctx := context.Background()
	fx := newSeqFixture(t)
	fx.d.silent["n5"] = true
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		if elapsed >= 700*time.Millisecond {
			fx.d.set(db.Node{Name: "n5"}, false) // up after three probes
		}
	}
	op, err := (&Figure8{Pace: fx.pace()}).Start(ctx, fx.c, seeded(1))
	require.NotEqual(t, Op{}, op, "the sequence ran: %v", err)
	assert.Equal(t, 3, op.Value.(faultrec.Targeted).ProbeMisses)

	fx = newSeqFixture(t)
	fx.d.silent["n5"] = true
	rec := history.NewRecorder(nil, func() time.Duration { return 0 }, history.RecorderOptions{PanicOnInvalid: true})
	t.Cleanup(func() { _ = rec.Close() })
	s := &Schedule{Faults: []Fault{&VoteRestart{Pace: fx.pace(), UpTimeout: time.Second}}, Interval: time.Second,
		Rng: seeded(1), Recorder: rec, Cluster: fx.c}
	r := newScheduleRun(s)
	r.runSequence(ctx, 0, time.Time{})
	ops := rec.Ops()
	require.Len(t, ops, 1)
	assert.Equal(t, "start-vote-restart", ops[0].F)
	assert.JSONEq(t, `{"error":"vote-restart: needs every node answering; n5 do not (killed or paused) after 5 probes in 1s",`+
		`"probe_misses":5}`, string(ops[0].Value))
	var tally faultrec.Tally
	tally.Add(ops[0].F, ops[0].Value)
	assert.Equal(t, faultrec.Tally{Refused: 1, ProbeMisses: 5}, tally)
}

// A sequence's waits end at the end the schedule gave it, as a wait that
// saw nothing: the sequence then records what it missed and undoes what
// it did, within its budget.
func TestSequenceWaitsEndAtTheSequenceEnd(t *testing.T) {
	fx := newSeqFixture(t)
	p := fx.pace()
	ctx := withSequenceEnd(context.Background(), fx.now().Add(3*time.Second))
	ok, err := p.until(ctx, 10*time.Second, time.Second, func() (bool, error) { return false, nil })
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, 3*time.Second, fx.now().Sub(time.Unix(0, 0)), "ended at the sequence's end, not after 10 s")
}
