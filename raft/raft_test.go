package raft

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// newTestRaft builds a bare state machine for hand-stepped tests.
func newTestRaft(t *testing.T, id uint64, peers []uint64, st State) *raft {
	t.Helper()
	r, err := newRaft(Config{ID: id, Peers: peers, ElectionTick: 10, HeartbeatTick: 1, Seed: 1}, st)
	require.NoError(t, err)
	return r
}

func ents(terms ...uint64) []Entry {
	out := make([]Entry, len(terms))
	for i, t := range terms {
		out[i] = Entry{Index: uint64(i + 1), Term: t, Data: []byte{byte(i)}}
	}
	return out
}

// takeMsgs returns and clears the queued messages.
func takeMsgs(r *raft) []Message {
	r.flush()
	m := r.msgs
	r.msgs = nil
	return m
}

// Section 5.4.2 / Figure 8: a leader must not commit an entry of an earlier
// term because a quorum stores it; only an entry of its own term commits
// (and with it everything before). The commit-old-term bug does exactly that.
func TestCommitRuleFigure8(t *testing.T) {
	for _, bug := range []bool{false, true} {
		st := State{HardState: HardState{Term: 3}, Entries: ents(1, 2)}
		r := newTestRaft(t, 1, []uint64{1, 2, 3, 4, 5}, st)
		r.bugs.CommitOldTerm = bug
		r.becomeCandidate()
		r.becomeLeader() // term 4; appends its empty entry at index 3
		r.prs[1].maybeUpdate(3)
		// Followers 2 and 3 store the term-2 entry at index 2, not yet index 3.
		for _, id := range []uint64{2, 3} {
			r.Step(Message{Type: MsgAppResp, From: id, To: 1, Term: 4, Index: 2})
		}
		if bug {
			require.Equal(t, uint64(2), r.log.committed, "the bug commits the old-term entry")
			continue
		}
		require.Equal(t, uint64(0), r.log.committed, "an old-term entry committed by counting replicas")
		r.Step(Message{Type: MsgAppResp, From: 2, To: 1, Term: 4, Index: 3})
		r.Step(Message{Type: MsgAppResp, From: 3, To: 1, Term: 4, Index: 3})
		require.Equal(t, uint64(3), r.log.committed, "the leader's own entry commits everything before it")
	}
}

// A follower whose log diverges over many entries but few terms is repaired
// in about one round trip per term, thanks to the conflict hint.
func TestConflictHintRepairsInTermsNotEntries(t *testing.T) {
	leaderTerms, followerTerms := []uint64{1}, []uint64{1}
	for i := 0; i < 100; i++ {
		leaderTerms = append(leaderTerms, 4)
		followerTerms = append(followerTerms, 2)
	}
	for i := 0; i < 100; i++ {
		followerTerms = append(followerTerms, 3)
	}
	leader := newTestRaft(t, 1, []uint64{1, 2}, State{HardState: HardState{Term: 4}, Entries: ents(leaderTerms...)})
	follower := newTestRaft(t, 2, []uint64{1, 2}, State{HardState: HardState{Term: 4}, Entries: ents(followerTerms...)})
	leader.becomeCandidate()
	leader.votes[2] = true
	leader.becomeLeader()
	rejects := 0
	for round := 0; round < 50; round++ {
		msgs := takeMsgs(leader)
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if m.To != 2 || m.Type != MsgApp {
				continue
			}
			follower.Step(m)
		}
		for _, m := range takeMsgs(follower) {
			if m.Reject {
				rejects++
			}
			leader.Step(m)
		}
	}
	require.Equal(t, leader.log.lastIndex(), leader.prs[2].Match, "follower not repaired")
	require.LessOrEqual(t, rejects, 3, "repair took %d rejected appends for 3 terms of divergence", rejects)
}

// CheckQuorum: a leader that hears from no quorum for an election timeout
// steps down.
func TestCheckQuorumStepsDown(t *testing.T) {
	r := newTestRaft(t, 1, []uint64{1, 2, 3}, State{})
	r.checkQuorum = true
	r.becomeCandidate()
	r.becomeLeader()
	for i := 0; i < 2*r.electionTimeout; i++ {
		r.tick()
	}
	require.Equal(t, Follower, r.role)
}

// PreVote: a node that cannot win does not bump its term.
func TestPreVoteKeepsTermWhenLosing(t *testing.T) {
	r := newTestRaft(t, 1, []uint64{1, 2, 3}, State{HardState: HardState{Term: 5}})
	r.preVote = true
	r.hup(false)
	require.Equal(t, PreCandidate, r.role)
	require.Equal(t, uint64(5), r.term)
	for _, m := range takeMsgs(r) {
		require.Equal(t, MsgPreVote, m.Type)
		require.Equal(t, uint64(6), m.Term)
		r.Step(Message{Type: MsgPreVoteResp, From: m.To, To: 1, Term: 5, Reject: true})
	}
	require.Equal(t, Follower, r.role)
	require.Equal(t, uint64(5), r.term)
}

// Section 5.4.1: a vote is denied to a candidate whose log is less up to date.
func TestVoteDeniedToStaleLog(t *testing.T) {
	r := newTestRaft(t, 1, []uint64{1, 2, 3}, State{HardState: HardState{Term: 3}, Entries: ents(1, 3)})
	r.Step(Message{Type: MsgVote, From: 2, To: 1, Term: 4, Index: 5, LogTerm: 2})
	msgs := takeMsgs(r)
	require.Len(t, msgs, 1)
	require.True(t, msgs[0].Reject)
	require.Equal(t, None, r.vote)
	r.Step(Message{Type: MsgVote, From: 3, To: 1, Term: 4, Index: 2, LogTerm: 3})
	msgs = takeMsgs(r)
	require.False(t, msgs[0].Reject)
	require.Equal(t, uint64(3), r.vote)
}

// Leadership transfer: the target is brought up to date, told to campaign,
// and wins; proposals are refused meanwhile.
func TestLeadershipTransfer(t *testing.T) {
	sc := newScenario(t, 3, 7, nil)
	l := sc.waitLeader(100)
	sc.commit(50)
	target := l.id%3 + 1
	require.NoError(t, l.rn.TransferLeadership(target))
	_, err := l.rn.Propose([]byte("x"))
	require.ErrorIs(t, err, ErrProposalDropped)
	sc.run(20)
	nl := sc.waitLeader(50)
	require.Equal(t, target, nl.id)
	sc.commit(50)
	require.ErrorIs(t, nl.rn.TransferLeadership(99), ErrUnknownPeer)
	follower := sc.node(l.id)
	require.ErrorIs(t, follower.rn.TransferLeadership(target), ErrNotLeader)
}

// A follower that fell behind the leader's compacted log gets a snapshot.
func TestSnapshotToLaggingFollower(t *testing.T) {
	sc := newScenario(t, 3, 3, func(c *simConfig) { c.compactEvery = 5 })
	l := sc.waitLeader(100)
	lag := l.id%3 + 1
	sc.crash(lag)
	var last uint64
	for range 30 {
		last = sc.commit(50)
	}
	require.Greater(t, l.rn.Status().SnapshotIndex, uint64(1))
	sc.restart(lag)
	sc.commit(200)
	n := sc.node(lag)
	require.GreaterOrEqual(t, n.smIndex, last)
	require.NotNil(t, n.disk.snap, "the lagging follower should have installed a snapshot")
}

// ReadIndex: a read at the leader is released only after a heartbeat round,
// and a read at a follower is forwarded to the leader.
func TestReadIndex(t *testing.T) {
	sc := newScenario(t, 3, 5, nil)
	l := sc.waitLeader(100)
	idx := sc.commit(50)
	require.NoError(t, l.rn.ReadIndex(42))
	require.Empty(t, l.rn.r.readStates, "read released before a quorum confirmed leadership")
	f := sc.node(l.id%3 + 1)
	require.NoError(t, f.rn.ReadIndex(43))
	sc.reads[42] = pendingRead{node: l.id, minIndex: idx}
	sc.reads[43] = pendingRead{node: f.id, minIndex: idx}
	sc.run(10)
	require.Empty(t, sc.reads, "reads not released")
}

func TestNewRawNodeRejectsBadConfigAndState(t *testing.T) {
	good := Config{ID: 1, Peers: []uint64{1, 2, 3}, ElectionTick: 10, HeartbeatTick: 1}
	cases := map[string]struct {
		cfg Config
		st  State
	}{
		"zero id":           {Config{Peers: []uint64{1}, ElectionTick: 10, HeartbeatTick: 1}, State{}},
		"election<=beat":    {Config{ID: 1, Peers: []uint64{1}, ElectionTick: 1, HeartbeatTick: 1}, State{}},
		"not a voter":       {Config{ID: 4, Peers: []uint64{1, 2, 3}, ElectionTick: 10, HeartbeatTick: 1}, State{}},
		"duplicate peer":    {Config{ID: 1, Peers: []uint64{1, 1}, ElectionTick: 10, HeartbeatTick: 1}, State{}},
		"lease w/o quorum":  {Config{ID: 1, Peers: []uint64{1}, ElectionTick: 10, HeartbeatTick: 1, ReadOnly: ReadLeaseBased}, State{}},
		"gap in log":        {good, State{HardState: HardState{Term: 1}, Entries: []Entry{{Index: 1, Term: 1}, {Index: 3, Term: 1}}}},
		"commit past end":   {good, State{HardState: HardState{Term: 1, Commit: 5}, Entries: ents(1)}},
		"terms go backward": {good, State{HardState: HardState{Term: 3}, Entries: ents(2, 1)}},
	}
	for name, c := range cases {
		_, err := NewRawNode(c.cfg, c.st)
		require.Error(t, err, name)
	}
}

func TestStepRejectsMalformedMessages(t *testing.T) {
	rn, err := NewRawNode(Config{ID: 1, Peers: []uint64{1, 2}, ElectionTick: 10, HeartbeatTick: 1}, State{})
	require.NoError(t, err)
	for _, m := range []Message{
		{Type: 0, From: 2, To: 1},
		{Type: 99, From: 2, To: 1},
		{Type: MsgApp, From: 2, To: 3},
		{Type: MsgApp, From: 0, To: 1},
		{Type: MsgApp, From: 1, To: 1},
		{Type: MsgSnap, From: 2, To: 1, Term: 1},
	} {
		require.Error(t, rn.Step(m), "%v", m)
	}
	require.True(t, errors.Is(rn.Step(Message{Type: MsgApp, From: 1, To: 1}), ErrUnknownPeer))
	// A node outside this node's configuration may be a member it has not
	// heard of yet (or one removed since): its messages are taken.
	require.NoError(t, rn.Step(Message{Type: MsgApp, From: 7, To: 1}))
}

func TestReadyContractIsEnforced(t *testing.T) {
	rn, err := NewRawNode(Config{ID: 1, Peers: []uint64{1}, ElectionTick: 10, HeartbeatTick: 1}, State{})
	require.NoError(t, err)
	rn.Campaign()
	require.True(t, rn.HasReady())
	rd := rn.Ready()
	require.NotEmpty(t, rd.Entries, "a single node leads at once and appends its empty entry")
	require.Panics(t, func() { rn.Tick() })
	require.Panics(t, func() { _, _ = rn.Propose([]byte("x")) })
	rn.Advance()
	require.Panics(t, func() { rn.Advance() })
	// After Advance the entry is durable and, alone, the node commits it.
	rd = rn.Ready()
	require.Len(t, rd.CommittedEntries, 1)
	require.Equal(t, EntryNoop, rd.CommittedEntries[0].Type)
	rn.Advance()
}

func TestPlantedBugsAreAnnouncedAndParsed(t *testing.T) {
	var b Bugs
	for _, name := range BugNames() {
		require.True(t, b.Enable(name))
	}
	require.False(t, b.Enable("no-such-bug"))
	require.Equal(t, BugNames(), b.Names())
	require.Empty(t, Bugs{}.Names())

	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	_, err := NewRawNode(Config{ID: 1, Peers: []uint64{1}, ElectionTick: 10, HeartbeatTick: 1, Bugs: b, Logger: logger}, State{})
	require.NoError(t, err)
	require.Contains(t, buf.String(), "PLANTED BUGS ENABLED")
	require.Contains(t, buf.String(), "forget-vote,commit-old-term,narrow-election")
}

// SetMaxMsgBytes(1) makes a leader send one entry per append message: a
// follower missing the old entries gets them one by one, before the
// leader's own entry, the order Figure 8 needs. The default batches them.
func TestSetMaxMsgBytesSplitsAppends(t *testing.T) {
	for _, limit := range []uint64{0, 1} {
		old := ents(1, 2, 2)
		for i := range old {
			old[i].Data = []byte("a client's write") // the leader's own entry is empty
		}
		rn, err := NewRawNode(Config{ID: 1, Peers: []uint64{1, 2}, ElectionTick: 10, HeartbeatTick: 1, Seed: 1},
			State{HardState: HardState{Term: 3}, Entries: old})
		require.NoError(t, err)
		rn.SetMaxMsgBytes(limit)
		leader := rn.r
		follower := newTestRaft(t, 2, []uint64{1, 2}, State{HardState: HardState{Term: 3}, Entries: old[:1]})
		leader.becomeCandidate()
		leader.votes[2] = true
		leader.becomeLeader()
		most := 0
		for range 20 {
			for _, m := range takeMsgs(leader) {
				if m.To == 2 && m.Type == MsgApp {
					most = max(most, len(m.Entries))
					follower.Step(m)
				}
			}
			for _, m := range takeMsgs(follower) {
				leader.Step(m)
			}
		}
		require.Equal(t, leader.log.lastIndex(), leader.prs[2].Match, "limit %d: follower not caught up", limit)
		if limit == 1 {
			require.Equal(t, 1, most, "one entry per append message")
		} else {
			require.Equal(t, 3, most, "the default sends the old entries and the leader's own together")
		}
	}
}

// SetMaxInflightMsgs(1), with one entry per message, makes a leader send
// the next append only once the one before is acknowledged: a follower
// missing old entries never has two in flight, so it holds the leader's
// own entry only after it acknowledged every old one. The default sends
// them all at once.
func TestSetMaxInflightMsgsOrdersAppends(t *testing.T) {
	for _, window := range []int{0, 1} {
		old := ents(1, 2, 2, 2)
		for i := range old {
			old[i].Data = []byte("a client's write")
		}
		rn, err := NewRawNode(Config{ID: 1, Peers: []uint64{1, 2}, ElectionTick: 10, HeartbeatTick: 1, Seed: 1},
			State{HardState: HardState{Term: 3}, Entries: old})
		require.NoError(t, err)
		rn.SetMaxMsgBytes(1)
		rn.SetMaxInflightMsgs(window)
		leader := rn.r
		follower := newTestRaft(t, 2, []uint64{1, 2}, State{HardState: HardState{Term: 3}, Entries: old[:1]})
		leader.becomeCandidate()
		leader.votes[2] = true
		leader.becomeLeader()
		most := 0
		for range 20 {
			inFlight := 0
			for _, m := range takeMsgs(leader) {
				if m.To == 2 && m.Type == MsgApp && len(m.Entries) > 0 {
					inFlight++
					follower.Step(m)
				}
			}
			most = max(most, inFlight)
			for _, m := range takeMsgs(follower) {
				leader.Step(m)
			}
		}
		require.Equal(t, leader.log.lastIndex(), leader.prs[2].Match, "window %d: follower not caught up", window)
		if window == 1 {
			require.Equal(t, 1, most, "one append in flight at a time")
		} else {
			require.Greater(t, most, 1, "the default pipelines the appends")
		}
	}
}

// Only a leader's round whose term and vote did not change may send
// before it writes; its own entries count toward commit only after
// Advance, and nothing is stepped before Advance.
func TestSendFirstOnlyForALeadersAppends(t *testing.T) {
	rn, err := NewRawNode(Config{ID: 1, Peers: []uint64{1, 2, 3}, ElectionTick: 10, HeartbeatTick: 1}, State{})
	require.NoError(t, err)
	rn.Campaign()
	rd := rn.Ready()
	require.False(t, rd.SendFirst, "a candidate's vote requests follow its durable term and vote")
	require.NotEmpty(t, rd.Messages)
	rn.Advance()
	for _, from := range []uint64{2, 3} {
		require.NoError(t, rn.Step(Message{Type: MsgVoteResp, From: from, To: 1, Term: 1}))
	}
	rd = rn.Ready()
	require.Equal(t, Leader, rn.Status().Role)
	require.True(t, rd.SendFirst, "the new leader's appends")
	require.NotEmpty(t, rd.Entries)
	last := rd.Entries[len(rd.Entries)-1].Index
	// Nothing can be stepped before Advance, which says the leader's copy is
	// durable: a follower's acknowledgement then makes a quorum.
	require.Panics(t, func() { _ = rn.Step(Message{Type: MsgAppResp, From: 2, To: 1, Term: 1, Index: last}) })
	rn.Advance()
	require.NoError(t, rn.Step(Message{Type: MsgAppResp, From: 2, To: 1, Term: 1, Index: last}))
	require.Equal(t, last, rn.Status().Commit)

	single, err := NewRawNode(Config{ID: 1, Peers: []uint64{1}, ElectionTick: 10, HeartbeatTick: 1}, State{})
	require.NoError(t, err)
	single.Campaign()
	rd = single.Ready()
	require.Equal(t, Leader, single.Status().Role)
	require.False(t, rd.SendFirst, "leading in a term that is not durable yet")
}
