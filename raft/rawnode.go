package raft

import "fmt"

// Ready is one round of output. The application must, in this order:
//
//  1. persist HardState (when not empty), Snapshot (when not nil) and
//     Entries (truncating any stored entries from Entries[0].Index on)
//     durably — with fsync when MustSync;
//  2. send Messages;
//  3. restore the state machine from Snapshot (when not nil), then apply
//     CommittedEntries in order, skipping EntryNoop entries;
//  4. serve each ReadState once the applied index reaches its Index;
//  5. call Advance.
//
// Step 1 must complete before step 2: a vote or an append acknowledgement
// promises that the state behind it survives a crash. The one exception is
// SendFirst: a leader's appends promise nothing, so it may send them while
// (or before) it writes the same entries (Raft thesis, section 10.2.1).
// Step 3 may overlap step 2, and may precede step 1 for the committed
// entries below Entries[0].Index (all of them when Entries is empty):
// committed, they are durable on a quorum, and earlier Readys handed them
// out; the others are entries of this same Ready (a follower learns the
// commit with the append), applied only after step 1. With a Snapshot,
// step 3 follows step 1 entirely. No other RawNode method may be called
// between Ready and Advance.
type Ready struct {
	// SoftState is non-nil when the leader or this node's role changed.
	SoftState *SoftState
	// HardState is empty when unchanged.
	HardState HardState
	// Snapshot is a snapshot received from the leader, to persist and restore.
	Snapshot *Snapshot
	// Entries are to be appended to stable storage. The slice and the
	// entries' Data are shared with the core and must not be modified.
	Entries []Entry
	// CommittedEntries are to be applied to the state machine.
	CommittedEntries []Entry
	// Messages are to be sent after the state above is durable.
	Messages []Message
	// ReadStates release linearizable reads.
	ReadStates []ReadState
	// ProposalResults answer proposals this node forwarded.
	ProposalResults []ProposalResult
	// MustSync: the term, vote, entries or snapshot changed, so step 1 needs
	// an fsync. A change of the commit index alone does not.
	MustSync bool
	// SendFirst: this node leads and its term and vote did not change, so
	// Messages (appends, heartbeats, answers to reads and stale messages)
	// depend on nothing that step 1 makes durable, and may be sent before
	// it. The leader's own entries still count toward a quorum only after
	// Advance, which must follow step 1.
	SendFirst bool
}

// handedOut remembers what a Ready gave the application, so Advance can
// acknowledge exactly that.
type handedOut struct {
	lastIndex   uint64
	lastApplied uint64
	hard        HardState
	hardSet     bool
	soft        SoftState
}

// RawNode is the deterministic Raft core: no goroutines, no clock, no I/O.
// Time advances by Tick, input arrives by Step, Propose and ReadIndex, and
// all output leaves through Ready. It is not safe for concurrent use.
type RawNode struct {
	r        *raft
	prevSoft SoftState
	prevHard HardState
	pending  *handedOut
}

// NewRawNode starts a node from its configuration and the state it
// recovered from stable storage (the zero State for a new node).
func NewRawNode(c Config, st State) (*RawNode, error) {
	r, err := newRaft(c, st)
	if err != nil {
		return nil, err
	}
	rn := &RawNode{r: r, prevSoft: r.softState(), prevHard: r.hardState()}
	if c.Bugs.ForgetVote {
		rn.prevHard.Vote = 0
	}
	return rn, nil
}

func (rn *RawNode) mustNotBePending(op string) {
	if rn.pending != nil {
		panic(fmt.Sprintf("raft: %s called between Ready and Advance", op))
	}
}

// Tick advances logical time by one tick.
func (rn *RawNode) Tick() {
	rn.mustNotBePending("Tick")
	rn.r.ticks++
	rn.r.tick()
	rn.r.endAbstention()
}

// Step feeds a message received from a peer. Malformed messages (unknown
// type, no sender, or addressed elsewhere) are rejected with an error and
// change nothing.
func (rn *RawNode) Step(m Message) error {
	rn.mustNotBePending("Step")
	switch {
	case !m.Type.Valid():
		return fmt.Errorf("raft: step: unknown message type %d", m.Type)
	case m.To != rn.r.id:
		return fmt.Errorf("raft: step: message for %d delivered to %d", m.To, rn.r.id)
	case m.From == None || m.From == rn.r.id:
		// Any other sender may be a member this node does not know of yet
		// (a change it has not received) or one removed since.
		return fmt.Errorf("raft: step: message from %d: %w", m.From, ErrUnknownPeer)
	case m.Type == MsgSnap && m.Snapshot == nil:
		return fmt.Errorf("raft: step: MsgSnap without a snapshot")
	}
	rn.r.Step(m)
	return nil
}

// Propose appends commands to the log if this node leads. It returns the
// index of the first; the commands commit at consecutive indexes unless a
// new leader overwrites them (the entry applied at an index then has another
// term). ErrProposalDropped means nothing was appended.
func (rn *RawNode) Propose(data ...[]byte) (uint64, error) {
	rn.mustNotBePending("Propose")
	if len(data) == 0 {
		return 0, fmt.Errorf("raft: propose: no commands")
	}
	return rn.r.propose(data...)
}

// ProposeConfChange appends a single-server membership change if this
// node leads, and returns its index. The change is in force on each node
// from the moment it appends it (see doc.go). ErrConfChangePending means
// an earlier change is not committed yet, or this leader has not committed
// an entry of its term; ErrConfChangeInvalid that the change does not fit
// the membership; ErrProposalDropped that this node does not lead. In
// every case nothing was appended.
func (rn *RawNode) ProposeConfChange(cc ConfChange) (uint64, error) {
	rn.mustNotBePending("ProposeConfChange")
	return rn.r.proposeConfChange(cc)
}

// ForwardProposal sends commands to the leader from a follower, as one
// request identified by ctx, which the application chooses (unique among
// its forwarded proposals). The leader appends them as its own proposals;
// the answer (where, in which term, or that nothing was appended) comes as
// a ProposalResult in a later Ready, or never (the message or its answer
// was lost, or leadership changed: the outcome is then unknown).
// ErrNoLeader means no leader is known; a leader proposes with Propose.
func (rn *RawNode) ForwardProposal(ctx uint64, data ...[]byte) error {
	rn.mustNotBePending("ForwardProposal")
	r := rn.r
	switch {
	case len(data) == 0:
		return fmt.Errorf("raft: forward proposal: no commands")
	case r.role == Leader:
		return fmt.Errorf("raft: forward proposal: %w: this node leads, propose here", ErrProposalDropped)
	case r.lead == None:
		return ErrNoLeader
	}
	ents := make([]Entry, len(data))
	for i, d := range data {
		ents[i] = Entry{Type: EntryNormal, Data: d}
	}
	r.send(Message{Type: MsgProp, To: r.lead, Context: ctx, Entries: ents})
	return nil
}

// ReadIndex asks for a linearizable read identified by ctx, which the
// application chooses (unique among its outstanding reads). The answer comes
// as a ReadState in a later Ready, or never (leadership changed: the
// application times the read out). Asking again under the same ctx (the
// first request or its answer may be lost) is allowed: every ask may be
// answered, each answer valid for reads that arrived before the first ask.
// ErrNoLeader means no leader is known.
func (rn *RawNode) ReadIndex(ctx uint64) error {
	rn.mustNotBePending("ReadIndex")
	r := rn.r
	switch {
	case r.role == Leader:
		r.handleReadIndex(r.id, ctx)
	case r.lead == None:
		return ErrNoLeader
	default:
		r.send(Message{Type: MsgReadIndex, To: r.lead, Context: ctx})
	}
	return nil
}

// Abstaining reports whether the node neither votes nor campaigns
// (Config.Abstain, until Vote and two election timeouts).
func (rn *RawNode) Abstaining() bool { return rn.r.abstain }

// Vote ends the abstention Config.Abstain began, once the node has also
// run for two election timeouts (raft.endAbstention). The application
// calls it when a leader has caught the node up: a ReadIndex it asked
// after it started was answered with index i, and it has applied through
// i. The answer proves that a leader of some term T, with a quorum at T
// behind it after the node started, held every entry committed before
// (those the node may have acknowledged and lost among them); the node
// now holds them too, and its term is at least T. A vote the node forgot
// that elected a leader left a quorum at that term, which the ReadIndex
// quorum meets, so T is at least that term; a vote that had not yet
// elected anyone expires with its candidacy, within the two timeouts.
func (rn *RawNode) Vote() {
	rn.mustNotBePending("Vote")
	rn.r.caughtUp = true
	rn.r.endAbstention()
}

// TransferLeadership asks the leader to hand leadership to node to.
func (rn *RawNode) TransferLeadership(to uint64) error {
	rn.mustNotBePending("TransferLeadership")
	return rn.r.transferLeadership(to)
}

// SetMaxMsgBytes changes Config.MaxMsgBytes from now on (0 means 1 MiB).
// The size of append messages is no part of Raft's safety: any value
// keeps every invariant, and a smaller one only sends more messages.
func (rn *RawNode) SetMaxMsgBytes(n uint64) {
	if n == 0 {
		n = 1 << 20
	}
	rn.r.maxMsgBytes = n
}

// SetMaxInflightMsgs changes Config.MaxInflightMsgs from now on, for every
// follower (0 means 256). Like the message size, the window of appends in
// flight is no part of Raft's safety: 1 sends the next append only once
// the one before is acknowledged, which orders, in time, when each entry
// reaches the followers.
func (rn *RawNode) SetMaxInflightMsgs(n int) {
	if n <= 0 {
		n = 256
	}
	rn.r.maxInflight = n
	for _, p := range rn.r.prs {
		p.inflights.maxMsgs = n
	}
}

// Campaign makes this node start an election now (as on an election
// timeout). With CheckQuorum, peers that started less than an election
// timeout ago, or heard from a leader within one, ignore it.
func (rn *RawNode) Campaign() {
	rn.mustNotBePending("Campaign")
	rn.r.hup(false)
}

// PeerLost tells the node that its transport's connection from peer id
// ended: closed or reset by the peer, as when the peer's process dies (not
// a timeout: silence says nothing). A follower whose leader that is stops
// honouring it at once and campaigns at its next tick, two ticks later per
// surviving voter of lower id, instead of after its election timeout (see
// raft.leaderLost). Anything else ignores it.
func (rn *RawNode) PeerLost(id uint64) {
	rn.mustNotBePending("PeerLost")
	rn.r.leaderLost(id)
}

// Compact records that the application took a snapshot of its state machine
// at applied index index, and drops the log entries it covers. It returns the
// snapshot with its metadata filled in; the application persists it before
// removing the same entries from its own log.
func (rn *RawNode) Compact(index uint64, data []byte) (Snapshot, error) {
	rn.mustNotBePending("Compact")
	l := &rn.r.log
	if index <= l.snapIndex {
		return Snapshot{}, fmt.Errorf("raft: compact %d: %w (snapshot at %d)", index, ErrCompacted, l.snapIndex)
	}
	if index > l.applied {
		return Snapshot{}, fmt.Errorf("raft: compact %d: past the applied index %d", index, l.applied)
	}
	term, _ := l.term(index)
	s := &Snapshot{Meta: SnapshotMeta{Index: index, Term: term, ConfState: rn.r.conf.at(index).clone()}, Data: data}
	l.compact(s)
	rn.r.conf.compacted(index)
	return *s, nil
}

// HasReady reports whether Ready would return anything.
func (rn *RawNode) HasReady() bool {
	r := rn.r
	if r.role == Leader && (r.needBcast || r.readOnly.needBcast) {
		return true
	}
	return len(r.msgs) > 0 || len(r.readStates) > 0 || len(r.propResults) > 0 ||
		r.log.pendingSnapshot != nil || len(r.log.unstable()) > 0 ||
		r.log.applied < r.log.committed ||
		r.softState() != rn.prevSoft || rn.bugged(r.hardState()) != rn.prevHard
}

// bugged applies the forget-vote bug to the hard state given to storage.
func (rn *RawNode) bugged(hs HardState) HardState {
	if rn.r.bugs.ForgetVote {
		hs.Vote = None
	}
	return hs
}

// Ready returns this round's output; see Ready for what the application
// must do with it. Advance must follow.
func (rn *RawNode) Ready() Ready {
	rn.mustNotBePending("Ready")
	r := rn.r
	r.flush()
	rd := Ready{
		Entries:          r.log.unstable(),
		CommittedEntries: r.log.nextCommitted(),
		Messages:         r.msgs,
		ReadStates:       r.readStates,
		ProposalResults:  r.propResults,
		Snapshot:         r.log.pendingSnapshot,
	}
	r.msgs, r.readStates, r.propResults, r.log.pendingSnapshot = nil, nil, nil, nil
	h := &handedOut{lastIndex: r.log.lastIndex(), lastApplied: r.log.committed, soft: r.softState()}
	if h.soft != rn.prevSoft {
		rd.SoftState = &h.soft
	}
	termOrVote := false
	if hs := rn.bugged(r.hardState()); hs != rn.prevHard {
		rd.HardState, h.hard, h.hardSet = hs, hs, true
		termOrVote = hs.Term != rn.prevHard.Term || hs.Vote != rn.prevHard.Vote
	}
	rd.MustSync = termOrVote || len(rd.Entries) > 0 || rd.Snapshot != nil
	rd.SendFirst = r.role == Leader && !termOrVote && rd.Snapshot == nil
	rn.pending = h
	return rd
}

// Advance acknowledges that the last Ready was fully handled: its state is
// durable, its messages sent and its committed entries applied.
func (rn *RawNode) Advance() {
	h := rn.pending
	if h == nil {
		panic("raft: Advance called without a Ready")
	}
	rn.pending = nil
	r := rn.r
	rn.prevSoft = h.soft
	if h.hardSet {
		rn.prevHard = h.hard
	}
	r.log.stable = max(r.log.stable, h.lastIndex)
	r.log.applied = max(r.log.applied, h.lastApplied)
	if r.role == Leader {
		// The leader's own copy counts toward a quorum only once durable.
		if r.prs[r.id].maybeUpdate(r.log.stable) && r.maybeCommit() {
			r.bcastAppend()
		}
	}
}

// Status is a snapshot of a node's state for monitoring.
type Status struct {
	ID        uint64
	Role      Role
	Term      uint64
	Vote      uint64
	Lead      uint64
	Commit    uint64
	Applied   uint64
	LastIndex uint64
	// SnapshotIndex is the index the log was compacted up to.
	SnapshotIndex uint64
	// Conf is the membership in force (see doc.go); its slices are the
	// caller's.
	Conf ConfState
}

// Status reports the node's current state.
func (rn *RawNode) Status() Status {
	r := rn.r
	return Status{ID: r.id, Role: r.role, Term: r.term, Vote: r.vote, Lead: r.lead,
		Commit: r.log.committed, Applied: r.log.applied, LastIndex: r.log.lastIndex(),
		SnapshotIndex: r.log.snapIndex, Conf: r.conf.current().clone()}
}
