package raft

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// newAbstainingRaft is node 1 of 3, started abstaining, with entries of
// term 1 and its term at 2.
func newAbstainingRaft(t *testing.T) *raft {
	t.Helper()
	r, err := newRaft(Config{ID: 1, Peers: []uint64{1, 2, 3}, ElectionTick: 10, HeartbeatTick: 1, Seed: 1, Abstain: true},
		State{HardState: HardState{Term: 2}, Entries: ents(1, 1)})
	require.NoError(t, err)
	return r
}

// tickN ticks r as RawNode.Tick does, n times, and returns the messages.
func tickN(r *raft, n int) []Message {
	for range n {
		r.ticks++
		r.tick()
		r.endAbstention()
	}
	return takeMsgs(r)
}

// A node that lost durable state neither campaigns nor grants a vote,
// however long it hears from no leader, though it adopts newer terms.
func TestAbstainingNodeNeitherCampaignsNorVotes(t *testing.T) {
	r := newAbstainingRaft(t)
	for _, m := range tickN(r, 10*r.electionTimeout) {
		require.NotContains(t, []MessageType{MsgVote, MsgPreVote}, m.Type, "an abstaining node campaigned")
	}
	require.Equal(t, Follower, r.role)

	for _, kind := range []MessageType{MsgPreVote, MsgVote} {
		r.Step(Message{Type: kind, From: 2, To: 1, Term: 3, Index: 9, LogTerm: 2})
		msgs := takeMsgs(r)
		require.Len(t, msgs, 1)
		require.True(t, msgs[0].Reject, "%v granted to an up-to-date candidate while abstaining", kind)
	}
	require.Equal(t, uint64(3), r.term, "a newer term is adopted")
	require.Equal(t, None, r.vote)

	r.hup(true) // a leadership transfer's MsgTimeoutNow
	require.Equal(t, Follower, r.role)
}

// Vote ends the abstention, but not before two election timeouts since
// the start; then the node votes and campaigns again.
func TestVoteEndsTheAbstentionAfterTwoElectionTimeouts(t *testing.T) {
	r := newAbstainingRaft(t)
	tickN(r, r.electionTimeout)
	r.caughtUp = true // RawNode.Vote
	r.endAbstention()
	require.True(t, r.abstain, "caught up after one election timeout: a forgotten candidacy may still run")
	tickN(r, r.electionTimeout)
	require.False(t, r.abstain)

	r.Step(Message{Type: MsgVote, From: 2, To: 1, Term: 3, Index: 9, LogTerm: 2})
	msgs := takeMsgs(r)
	require.Len(t, msgs, 1)
	require.False(t, msgs[0].Reject)
	require.Equal(t, uint64(2), r.vote)
}

// Through RawNode: Abstaining reports the state, and Vote is what ends it.
func TestRawNodeVote(t *testing.T) {
	rn, err := NewRawNode(Config{ID: 1, Peers: []uint64{1, 2, 3}, ElectionTick: 10, HeartbeatTick: 1, Seed: 1, Abstain: true}, State{})
	require.NoError(t, err)
	for range 40 {
		rn.Tick()
	}
	require.True(t, rn.Abstaining(), "no Vote yet")
	require.Equal(t, Follower, rn.Status().Role)
	rn.Vote()
	require.False(t, rn.Abstaining())
	for range 40 {
		rn.Tick()
	}
	require.NotEqual(t, Follower, rn.Status().Role, "it campaigns again")
}

// A follower that lost entries it had acknowledged says so in its answer
// to a heartbeat whose commit index its log no longer reaches, and the
// leader drops its match index and sends the entries again: an idle
// leader would otherwise never repair it.
func TestLeaderResendsEntriesAFollowerLost(t *testing.T) {
	f := newTestRaft(t, 2, []uint64{1, 2, 3}, State{HardState: HardState{Term: 1}, Entries: ents(1, 1, 1)})
	f.Step(Message{Type: MsgHeartbeat, From: 1, To: 2, Term: 1, Commit: 5, Context: 7})
	msgs := takeMsgs(f)
	require.Len(t, msgs, 1)
	require.Equal(t, MsgHeartbeatResp, msgs[0].Type)
	require.True(t, msgs[0].Reject)
	require.Equal(t, uint64(3), msgs[0].RejectHint)
	require.Equal(t, uint64(7), msgs[0].Context, "it still acknowledges the heartbeat round")

	l := newTestRaft(t, 1, []uint64{1, 2, 3}, State{HardState: HardState{Term: 1}, Entries: ents(1, 1, 1, 1, 1)})
	l.becomeCandidate()
	l.becomeLeader()
	takeMsgs(l)
	pr := l.prs[2]
	pr.Match, pr.Next = 6, 7
	pr.becomeReplicate()
	l.Step(Message{Type: MsgHeartbeatResp, From: 2, To: 1, Term: l.term, Reject: true, RejectHint: 3})
	require.Equal(t, uint64(3), pr.Match)
	var resent bool
	for _, m := range takeMsgs(l) {
		if m.Type == MsgApp && m.To == 2 && m.Index == 3 {
			resent = true
		}
	}
	require.True(t, resent, "the leader sends from index 4 again")
}
