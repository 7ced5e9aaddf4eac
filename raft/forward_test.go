package raft

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forwardedResults delivers messages for some ticks (without ticking),
// handling every Ready as the simulator does but n's, whose proposal
// results it returns.
func forwardedResults(sc *scenario, n *simNode, ticks int) []ProposalResult {
	var got []ProposalResult
	for range ticks {
		sc.now++
		for _, m := range sc.net.due(sc.now, nil) {
			if d := sc.nodes[m.To-1]; d.rn != nil {
				require.NoError(sc.t, d.rn.Step(m))
			}
		}
		for _, d := range sc.nodes {
			if d.rn != nil && d.rn.HasReady() {
				if d == n {
					rd := d.rn.Ready()
					got = append(got, rd.ProposalResults...)
					for _, m := range rd.Messages {
						sc.net.send(sc.now, m)
					}
					d.rn.Advance()
					continue
				}
				sc.handleReady(d)
			}
		}
	}
	return got
}

// A follower forwards commands to the leader, which appends them as its
// own and says where; they commit like any other.
func TestForwardedProposalsAreAppendedByTheLeader(t *testing.T) {
	sc := newScenario(t, 3, 7, nil)
	l := sc.waitLeader(200)
	sc.commit(200)
	f := sc.node(l.id%3 + 1)
	require.NoError(t, f.rn.ForwardProposal(42, []byte("a"), []byte("b")))
	res := forwardedResults(sc, f, 20)
	require.Len(t, res, 1)
	term := l.rn.Status().Term
	assert.Equal(t, ProposalResult{Ctx: 42, Index: res[0].Index, Term: term}, res[0])
	assert.Equal(t, []byte("a"), sc.node(l.id).rn.r.log.slice(res[0].Index, res[0].Index+1)[0].Data)

	err := l.rn.ForwardProposal(1, []byte("x"))
	assert.ErrorIs(t, err, ErrProposalDropped, "a leader proposes itself")
	assert.Error(t, f.rn.ForwardProposal(2))
}

// A leader handing off leadership drops forwarded commands, and says so;
// a node that knows no leader cannot forward.
func TestForwardedProposalsDroppedDuringATransfer(t *testing.T) {
	sc := newScenario(t, 3, 8, nil)
	l := sc.waitLeader(200)
	sc.commit(200)
	f := sc.node(l.id%3 + 1)
	other := sc.node(f.id%3 + 1)
	sc.disconnect(other.id) // the transfer target never catches up: the transfer stays in progress
	require.NoError(t, l.rn.TransferLeadership(other.id))
	require.NoError(t, f.rn.ForwardProposal(7, []byte("a")))
	res := forwardedResults(sc, f, 20)
	require.Len(t, res, 1)
	assert.True(t, res[0].Dropped)
	assert.Equal(t, uint64(7), res[0].Ctx)

	lone, err := NewRawNode(Config{ID: 1, Peers: []uint64{1, 2, 3}, ElectionTick: 10, HeartbeatTick: 1}, State{})
	require.NoError(t, err)
	assert.ErrorIs(t, lone.ForwardProposal(1, []byte("a")), ErrNoLeader)
}
