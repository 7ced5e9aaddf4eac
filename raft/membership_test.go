package raft

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// change proposes cc at the leader (again while the leader has a change
// in flight or no entry of its term committed) and runs until every live
// member of the resulting configuration has applied it; it returns the
// change's index.
func (sc *scenario) change(cc ConfChange, max int) uint64 {
	sc.t.Helper()
	var index uint64
	var l *simNode
	for i := 0; index == 0; i++ {
		l = sc.waitLeader(max)
		var err error
		index, err = l.rn.ProposeConfChange(cc)
		switch {
		case errors.Is(err, ErrConfChangePending) && i < max:
			sc.run(1)
		case err != nil:
			sc.fatalf("n%d refused %v: %v", l.id, cc, err)
		}
	}
	want := l.rn.Status().Conf
	for range max {
		done := true
		for _, id := range want.members() {
			if n := sc.node(id); n.rn != nil && n.smIndex < index {
				done = false
			}
		}
		if done {
			return index
		}
		sc.run(1)
	}
	sc.fatalf("%v at index %d not applied by every member of %v within %d ticks", cc, index, want, max)
	return 0
}

func confOf(sc *scenario, id uint64) ConfState { return sc.node(id).rn.Status().Conf }

// A cluster grows from three voters to five through learners and shrinks
// back, every member agreeing on the membership at each step, and a learner
// catching up on the whole log before it votes.
func TestMembershipGrowAndShrink(t *testing.T) {
	sc := newScenario(t, 3, 1, func(c *simConfig) { c.spares = 2 })
	sc.waitLeader(200)
	before := sc.commit(200)

	sc.change(ConfChange{Type: AddLearner, NodeID: 4}, 300)
	assert.Equal(t, ConfState{Voters: []uint64{1, 2, 3}, Learners: []uint64{4}}, confOf(sc, 1))
	assert.Equal(t, confOf(sc, 1), confOf(sc, 4), "the learner knows the membership from the entry")
	assert.GreaterOrEqual(t, sc.node(4).smIndex, before, "the learner applied the log before it")

	sc.change(ConfChange{Type: PromoteVoter, NodeID: 4}, 300)
	sc.change(ConfChange{Type: AddLearner, NodeID: 5}, 300)
	sc.change(ConfChange{Type: PromoteVoter, NodeID: 5}, 300)
	for id := uint64(1); id <= 5; id++ {
		assert.Equal(t, ConfState{Voters: []uint64{1, 2, 3, 4, 5}}, confOf(sc, id), "n%d", id)
	}
	sc.commit(300)

	sc.change(ConfChange{Type: RemoveNode, NodeID: 4}, 300)
	sc.change(ConfChange{Type: RemoveNode, NodeID: 5}, 300)
	assert.Equal(t, ConfState{Voters: []uint64{1, 2, 3}}, confOf(sc, 1))
	sc.commit(300)
}

// A leader that removes itself keeps leading until the change commits, then
// steps down and never campaigns; the others elect a leader among
// themselves.
func TestMembershipRemovedLeaderStepsDown(t *testing.T) {
	sc := newScenario(t, 3, 2, nil)
	l := sc.waitLeader(200)
	sc.commit(200)
	sc.change(ConfChange{Type: RemoveNode, NodeID: l.id}, 300)
	sc.run(200)
	assert.NotEqual(t, Leader, l.rn.Status().Role)
	next := sc.waitLeader(300)
	assert.NotEqual(t, l.id, next.id)
	assert.NotContains(t, next.rn.Status().Conf.Voters, l.id)
	sc.run(500)
	assert.Equal(t, Follower, l.rn.Status().Role, "a removed node never campaigns")
}

// A learner counts toward no quorum: with two of three voters cut off, the
// leader commits nothing although the learner acknowledges everything.
func TestMembershipLearnerDoesNotCount(t *testing.T) {
	sc := newScenario(t, 3, 3, func(c *simConfig) { c.spares = 1 })
	l := sc.waitLeader(200)
	sc.commit(200)
	sc.change(ConfChange{Type: AddLearner, NodeID: 4}, 300)
	for _, id := range []uint64{1, 2, 3} {
		if id != l.id {
			sc.disconnect(id)
		}
	}
	commit := l.rn.Status().Commit
	_, err := l.rn.Propose([]byte("lonely"))
	require.NoError(t, err)
	sc.run(100)
	assert.Equal(t, commit, l.rn.Status().Commit)
	assert.Greater(t, sc.node(4).rn.Status().LastIndex, commit, "the learner has the entry")
	sc.run(300)
	assert.NotEqual(t, Leader, sc.node(4).rn.Status().Role, "a learner never campaigns")
}

// Changes that do not fit the membership, and a change while another is in
// flight, are refused and append nothing.
func TestMembershipRefusesBadChanges(t *testing.T) {
	sc := newScenario(t, 3, 4, func(c *simConfig) { c.spares = 1 })
	l := sc.waitLeader(200)
	sc.commit(200)
	last := l.rn.Status().LastIndex
	for _, cc := range []ConfChange{
		{Type: AddLearner, NodeID: 2},
		{Type: PromoteVoter, NodeID: 2},
		{Type: PromoteVoter, NodeID: 9},
		{Type: RemoveNode, NodeID: 9},
		{Type: AddLearner, NodeID: 0},
		{Type: 77, NodeID: 4},
	} {
		_, err := l.rn.ProposeConfChange(cc)
		assert.ErrorIs(t, err, ErrConfChangeInvalid, "%v", cc)
	}
	_, err := l.rn.ProposeConfChange(ConfChange{Type: AddLearner, NodeID: 4})
	require.NoError(t, err)
	_, err = l.rn.ProposeConfChange(ConfChange{Type: PromoteVoter, NodeID: 4})
	assert.ErrorIs(t, err, ErrConfChangePending)
	assert.Equal(t, last+1, l.rn.Status().LastIndex, "only the first change was appended")

	follower := sc.node(l.id%3 + 1)
	_, err = follower.rn.ProposeConfChange(ConfChange{Type: RemoveNode, NodeID: 4})
	assert.ErrorIs(t, err, ErrProposalDropped)

	one, err := NewRawNode(Config{ID: 1, Peers: []uint64{1}, ElectionTick: 10, HeartbeatTick: 1}, State{})
	require.NoError(t, err)
	one.Campaign()
	for one.HasReady() {
		one.Ready()
		one.Advance()
	}
	_, err = one.ProposeConfChange(ConfChange{Type: RemoveNode, NodeID: 1})
	assert.ErrorIs(t, err, ErrConfChangeInvalid, "the last voter")
	assert.Equal(t, Leader, one.Status().Role)
}

// A new leader proposes no change before it committed an entry of its own
// term: a change a previous leader left uncommitted may still win.
func TestMembershipWaitsForTheLeadersFirstCommit(t *testing.T) {
	rn, err := NewRawNode(Config{ID: 1, Peers: []uint64{1, 2, 3}, ElectionTick: 10, HeartbeatTick: 1}, State{})
	require.NoError(t, err)
	rn.Campaign()
	rd := rn.Ready()
	rn.Advance()
	for _, m := range rd.Messages {
		if m.Type == MsgVote {
			require.NoError(t, rn.Step(Message{Type: MsgVoteResp, From: m.To, To: 1, Term: m.Term}))
		}
	}
	require.Equal(t, Leader, rn.Status().Role)
	_, err = rn.ProposeConfChange(ConfChange{Type: AddLearner, NodeID: 4})
	assert.ErrorIs(t, err, ErrConfChangePending)
}

// The configuration lives in the log and in snapshots: a node restarted
// from its disk, or from a snapshot taken after a change, has it back.
func TestMembershipSurvivesRestartAndSnapshot(t *testing.T) {
	sc := newScenario(t, 3, 5, func(c *simConfig) { c.spares = 1; c.compactEvery = 4 })
	sc.waitLeader(200)
	sc.change(ConfChange{Type: AddLearner, NodeID: 4}, 300)
	want := confOf(sc, 1)
	for range 3 {
		sc.commit(300)
	}
	for _, n := range sc.nodes {
		if n.disk.snap != nil && n.disk.snap.Meta.Index >= 4 {
			assert.Equal(t, want, n.disk.snap.Meta.ConfState, "n%d's snapshot", n.id)
		}
	}
	for _, id := range []uint64{2, 4} {
		sc.crash(id)
		sc.restart(id)
		assert.Equal(t, want, confOf(sc, id), "n%d after a restart", id)
	}
}

func TestConfChangeEntryRoundTrip(t *testing.T) {
	e := ConfChangeEntry{Change: ConfChange{Type: PromoteVoter, NodeID: 300, Context: []byte(`{"peer":"10.0.0.4:7001"}`)},
		State: ConfState{Voters: []uint64{1, 2, 300}, Learners: []uint64{7}}}
	got, err := UnmarshalConfChangeEntry(e.Marshal())
	require.NoError(t, err)
	assert.Equal(t, e, got)
	b := e.Marshal()
	for i := range len(b) {
		if _, err := UnmarshalConfChangeEntry(b[:i]); err == nil {
			t.Errorf("a %d-byte prefix decoded", i)
		}
	}
	_, err = UnmarshalConfChangeEntry(append(slices.Clone(b), 0))
	assert.Error(t, err, "trailing bytes")
	plain := ConfChangeEntry{Change: ConfChange{Type: AddLearner, NodeID: 4}, State: ConfState{Voters: []uint64{1}, Learners: []uint64{4}}}
	got, err = UnmarshalConfChangeEntry(plain.Marshal())
	require.NoError(t, err)
	assert.Equal(t, plain, got, "no context decodes as nil")
	assert.False(t, errors.Is(err, ErrConfChangeInvalid))
}

// Leadership transfer works across membership changes: to a voter that
// joined as a learner and was promoted, and not to a learner, which never
// campaigns.
func TestMembershipLeadershipTransfer(t *testing.T) {
	sc := newScenario(t, 3, 5, func(c *simConfig) { c.spares = 2 })
	sc.waitLeader(200)
	sc.commit(200)
	sc.change(ConfChange{Type: AddLearner, NodeID: 4}, 300)
	sc.change(ConfChange{Type: PromoteVoter, NodeID: 4}, 300)
	sc.change(ConfChange{Type: AddLearner, NodeID: 5}, 300)
	l := sc.waitLeader(100)
	require.ErrorIs(t, l.rn.TransferLeadership(5), ErrUnknownPeer, "a learner cannot lead")
	if l.id == 4 {
		require.NoError(t, l.rn.TransferLeadership(1))
		sc.run(30)
		l = sc.waitLeader(100)
	}
	require.NoError(t, l.rn.TransferLeadership(4))
	sc.run(30)
	require.Equal(t, uint64(4), sc.waitLeader(100).id, "the promoted member leads")
	sc.commit(100)
}
