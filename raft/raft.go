package raft

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
)

// stepFunc handles a message of the current term in one role.
type stepFunc func(r *raft, m Message)

// raft is the protocol state machine of one node. It performs no I/O: it
// appends to its in-memory log and queues messages in msgs and read results
// in readStates; RawNode hands them to the application through Ready.
type raft struct {
	id   uint64
	term uint64
	vote uint64
	role Role
	lead uint64
	log  raftLog
	// conf is the membership over the log; voters and members (voters and
	// learners, sorted) are its current configuration, kept at hand.
	conf    confLog
	voters  []uint64
	members []uint64

	prs            map[uint64]*progress // leader only: one per voter, self included
	votes          map[uint64]bool      // candidates: who answered, and how
	leadTransferee uint64

	readOnly    readOnly
	readStates  []ReadState
	propResults []ProposalResult // answers to proposals this node forwarded
	msgs        []Message
	// needBcast: proposals were appended since the last broadcast; appends
	// go out once per round so a round's proposals share one message.
	needBcast bool

	// ticks counts every Tick since start: the logical clock of leases.
	ticks uint64
	// startupHold: this node started less than an election timeout ago and
	// may have promised a leader, before it crashed, not to vote; with
	// CheckQuorum it keeps that promise by not voting until the timeout passes.
	startupHold bool

	electionElapsed           int
	heartbeatElapsed          int
	electionTimeout           int
	heartbeatTimeout          int
	randomizedElectionTimeout int

	preVote     bool
	checkQuorum bool
	// abstain: this node neither votes nor campaigns (Config.Abstain);
	// caughtUp: RawNode.Vote was called (see endAbstention).
	abstain, caughtUp bool
	readMode          ReadOnlyOption
	maxMsgBytes       uint64
	maxInflight       int
	maxInBytes        uint64
	bugs              Bugs
	rand              *rand.Rand
	logger            *slog.Logger

	step stepFunc
	tick func()
}

func newRaft(c Config, st State) (*raft, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	r := &raft{
		id:               c.ID,
		electionTimeout:  c.ElectionTick,
		heartbeatTimeout: c.HeartbeatTick,
		preVote:          c.PreVote,
		checkQuorum:      c.CheckQuorum,
		abstain:          c.Abstain,
		readMode:         c.ReadOnly,
		maxMsgBytes:      c.MaxMsgBytes,
		maxInflight:      c.MaxInflightMsgs,
		maxInBytes:       c.MaxInflightBytes,
		bugs:             c.Bugs,
		rand:             rand.New(rand.NewPCG(c.Seed, c.ID)),
		logger:           c.Logger,
	}
	r.conf.base = ConfState{Voters: sortedVoters(c.Peers)}
	if err := r.loadState(st); err != nil {
		return nil, err
	}
	r.syncConf()
	if !c.Join && st.Snapshot == nil && len(st.Entries) == 0 && !slices.Contains(r.voters, r.id) {
		return nil, fmt.Errorf("raft: config: node %d is not among the voters %v", r.id, r.voters)
	}
	r.becomeFollower(r.term, None)
	// The forget-vote bug forgets this promise along with the vote itself.
	r.startupHold = !c.Bugs.ForgetVote
	c.announceBugs()
	return r, nil
}

// loadState installs the state recovered from stable storage.
func (r *raft) loadState(st State) error {
	if s := st.Snapshot; s != nil {
		r.log.snapIndex, r.log.snapTerm, r.log.snapshot = s.Meta.Index, s.Meta.Term, s
		if len(s.Meta.ConfState.Voters) > 0 {
			r.conf.restored(s.Meta.ConfState)
		}
	}
	next := r.log.snapIndex + 1
	for _, e := range st.Entries {
		if e.Index < next {
			continue // covered by the snapshot
		}
		if e.Index != next {
			return fmt.Errorf("raft: restore: entry index %d, want %d (the log has a gap)", e.Index, next)
		}
		if e.Term < r.log.lastTerm() {
			return fmt.Errorf("raft: restore: entry %d has term %d below its predecessor's %d", e.Index, e.Term, r.log.lastTerm())
		}
		r.log.entries = append(r.log.entries, e)
		next++
	}
	r.conf.appended(r.log.entries)
	hs := st.HardState
	if hs.Commit > r.log.lastIndex() {
		return fmt.Errorf("raft: restore: commit %d is past the last index %d", hs.Commit, r.log.lastIndex())
	}
	if r.log.lastTerm() > hs.Term && !hs.IsEmpty() {
		return fmt.Errorf("raft: restore: log term %d is past the hard state term %d", r.log.lastTerm(), hs.Term)
	}
	r.term, r.vote = max(hs.Term, r.log.lastTerm()), hs.Vote
	r.log.committed = max(hs.Commit, r.log.snapIndex)
	r.log.applied = r.log.snapIndex
	r.log.stable = r.log.lastIndex()
	return nil
}

func (r *raft) hardState() HardState {
	return HardState{Term: r.term, Vote: r.vote, Commit: r.log.committed}
}

func (r *raft) softState() SoftState { return SoftState{Lead: r.lead, Role: r.role} }

// quorum is the number of voters that makes a majority.
func (r *raft) quorum() int { return len(r.voters)/2 + 1 }

// syncConf makes the configuration at hand the one in force (see confLog)
// and, on a leader, tracks the progress of every member and of nobody
// else but itself.
func (r *raft) syncConf() {
	cs := r.conf.current()
	r.voters = cs.Voters
	r.members = cs.members()
	slices.Sort(r.members)
	if r.role != Leader {
		return
	}
	for _, id := range r.members {
		if r.prs[id] == nil {
			r.prs[id] = newProgress(r.log.lastIndex()+1, r.maxInflight, r.maxInBytes)
		}
	}
	for id := range r.prs {
		if id != r.id && !slices.Contains(r.members, id) {
			delete(r.prs, id)
		}
	}
}

func (r *raft) isVoter(id uint64) bool {
	_, found := slices.BinarySearch(r.voters, id)
	return found
}

func (r *raft) send(m Message) {
	m.From = r.id
	if m.Term == 0 {
		m.Term = r.term
	}
	r.msgs = append(r.msgs, m)
}

// reset moves to term, forgetting the vote when the term changes, and clears
// everything that belongs to a role.
func (r *raft) reset(term uint64) {
	if r.term != term {
		r.term = term
		r.vote = None
	}
	r.lead = None
	r.electionElapsed, r.heartbeatElapsed = 0, 0
	r.resetRandomizedElectionTimeout()
	r.leadTransferee = None
	r.votes = map[uint64]bool{}
	r.prs = nil
	r.needBcast = false
	r.readOnly.reset()
}

// resetRandomizedElectionTimeout draws the next election timeout from
// [E, 2E) ticks, or [E, E+1) under the narrow-election bug.
func (r *raft) resetRandomizedElectionTimeout() {
	spread := r.electionTimeout
	if r.bugs.NarrowElection {
		spread = 1
	}
	r.randomizedElectionTimeout = r.electionTimeout + r.rand.IntN(spread)
}

func (r *raft) becomeFollower(term, lead uint64) {
	r.step = stepFollower
	r.tick = r.tickElection
	r.reset(term)
	r.lead = lead
	r.role = Follower
}

func (r *raft) becomePreCandidate() {
	// The term and vote stay as they are: a pre-election changes nothing a
	// peer could observe if it fails.
	r.step = stepCandidate
	r.tick = r.tickElection
	r.votes = map[uint64]bool{}
	r.lead = None
	r.role = PreCandidate
}

func (r *raft) becomeCandidate() {
	r.step = stepCandidate
	r.tick = r.tickElection
	r.reset(r.term + 1)
	r.vote = r.id
	r.role = Candidate
}

func (r *raft) becomeLeader() {
	r.step = stepLeader
	r.tick = r.tickHeartbeat
	r.reset(r.term)
	r.lead = r.id
	r.role = Leader
	r.prs = make(map[uint64]*progress, len(r.members)+1)
	r.prs[r.id] = newProgress(r.log.lastIndex()+1, r.maxInflight, r.maxInBytes)
	r.syncConf()
	self := r.prs[r.id]
	self.Match, self.Next = r.log.stable, r.log.lastIndex()+1
	self.becomeReplicate()
	self.recentActive = true
	// The empty entry of the new term: committing it commits every earlier
	// entry (section 5.4.2) and lets ReadIndex trust the commit index.
	r.appendEntries(Entry{Type: EntryNoop})
	r.logger.Info("became leader", "node", r.id, "term", r.term)
}

// appendEntries assigns the leader's term and the next indexes to ents and
// appends them; followers receive them at the next broadcast.
func (r *raft) appendEntries(ents ...Entry) {
	li := r.log.lastIndex()
	for i := range ents {
		ents[i].Term = r.term
		ents[i].Index = li + 1 + uint64(i)
	}
	r.log.append(ents...)
	r.needBcast = true
	if hasConfChange(ents) {
		r.conf.appended(ents)
		r.syncConf()
	}
}

// hasConfChange reports whether ents hold a membership entry.
func hasConfChange(ents []Entry) bool {
	for _, e := range ents {
		if e.Type == EntryConfChange {
			return true
		}
	}
	return false
}

// endAbstention ends Config.Abstain once the node was caught up and has
// run for two election timeouts: by then any candidacy that began before
// the node started, and that a vote it forgot might have helped, has
// ended (a candidate gives up a term within 2E ticks, clocks running at
// similar rates, as CheckQuorum also assumes).
func (r *raft) endAbstention() {
	if r.abstain && r.caughtUp && r.ticks >= 2*uint64(r.electionTimeout) {
		r.abstain = false
		r.logger.Info("caught up: voting again", "node", r.id, "term", r.term)
	}
}

// hup starts an election when this node may.
func (r *raft) hup(transfer bool) {
	if r.role == Leader || !r.isVoter(r.id) || r.abstain {
		return
	}
	switch {
	case transfer:
		r.campaign(MsgVote, true)
	case r.preVote:
		r.campaign(MsgPreVote, false)
	default:
		r.campaign(MsgVote, false)
	}
}

// leaderLost is fast failover: a follower whose connection from its
// leader ended forgets the leader, so that it grants votes at once (it no
// longer ignores campaigns as a follower in a leader's lease does), and
// campaigns at its next tick, the surviving voters two ticks apart by id so
// that they do not split the vote. It also drops the hold of a node that
// started less than an election timeout ago: it has heard from a leader
// since. A pre-candidate that is ignored (its peers still hear the leader:
// the connection ended but the leader lives) asks again after the usual
// randomized timeout, unless the leader's next message makes it a follower
// again first; PreVote keeps its asks from disturbing anyone.
//
// Safety does not rest on the connection's end meaning a dead leader:
// every node still votes once per term, so a spurious end costs at most an
// election. Lease-based reads do rest on it (a leader serves reads while its
// followers promise to ignore campaigns for an election timeout), so under
// ReadLeaseBased a follower keeps its promise and waits for the timeout.
func (r *raft) leaderLost(id uint64) {
	const failoverStagger = 2 // ticks between survivors: a pre-vote and a vote round trip
	if r.role != Follower || id == None || id != r.lead || r.readMode == ReadLeaseBased {
		return
	}
	r.lead = None
	rank := 0
	for _, v := range r.voters {
		if v != id && v < r.id {
			rank++
		}
	}
	// The campaign is due in 1+stagger*rank ticks; retries after it come at
	// the usual randomized timeout.
	r.electionElapsed = max(0, r.randomizedElectionTimeout-1-failoverStagger*rank)
	r.startupHold = false
	r.logger.Info("leader's connection ended: campaigning early", "node", r.id, "term", r.term,
		"leader", id, "in_ticks", r.randomizedElectionTimeout-r.electionElapsed)
}

// campaign runs a pre-election (kind MsgPreVote) or an election (MsgVote).
func (r *raft) campaign(kind MessageType, transfer bool) {
	var term uint64
	if kind == MsgPreVote {
		r.becomePreCandidate()
		term = r.term + 1
	} else {
		r.becomeCandidate()
		term = r.term
	}
	if r.poll(r.id, true) {
		r.wonCampaign(kind)
		return
	}
	for _, id := range r.voters {
		if id == r.id {
			continue
		}
		r.send(Message{Type: kind, To: id, Term: term, Index: r.log.lastIndex(),
			LogTerm: r.log.lastTerm(), Transfer: transfer})
	}
}

// campaignKind is the vote request a (pre-)candidate sent.
func campaignKind(role Role) MessageType {
	if role == PreCandidate {
		return MsgPreVote
	}
	return MsgVote
}

func (r *raft) wonCampaign(kind MessageType) {
	if kind == MsgPreVote {
		r.campaign(MsgVote, false)
	} else {
		r.becomeLeader()
	}
}

// poll records a vote answer and reports whether a quorum granted.
func (r *raft) poll(id uint64, granted bool) bool {
	if _, seen := r.votes[id]; !seen {
		r.votes[id] = granted
	}
	return r.countVotes(true) >= r.quorum()
}

// countVotes counts the answers of voters (of the configuration in force)
// that were granted, or denied.
func (r *raft) countVotes(granted bool) int {
	n := 0
	for id, v := range r.votes {
		if v == granted && r.isVoter(id) {
			n++
		}
	}
	return n
}

// Step advances the state machine with a message from a peer.
func (r *raft) Step(m Message) {
	switch {
	case m.Term > r.term:
		if (m.Type == MsgVote || m.Type == MsgPreVote) && !m.Transfer && r.inLease() {
			// A follower that heard from a live leader within the election
			// timeout ignores campaigns: the candidate is probably partitioned
			// and would only disrupt the cluster (CheckQuorum's other half).
			return
		}
		switch {
		case m.Type == MsgPreVote:
			// A pre-vote never changes this node's term.
		case m.Type == MsgPreVoteResp && !m.Reject:
			// A granted pre-vote carries the future term; it is counted, not adopted.
		case m.Type == MsgApp || m.Type == MsgHeartbeat || m.Type == MsgSnap:
			r.becomeFollower(m.Term, m.From)
		default:
			r.becomeFollower(m.Term, None)
		}
	case m.Term < r.term:
		r.stepStale(m)
		return
	}

	switch m.Type {
	case MsgVote, MsgPreVote:
		r.handleVoteRequest(m)
	default:
		r.step(r, m)
	}
}

// inLease reports whether this node heard from a leader within the election
// timeout (or started less than one ago), when CheckQuorum makes that
// meaningful.
func (r *raft) inLease() bool {
	return r.checkQuorum && (r.lead != None || r.startupHold) && r.electionElapsed < r.electionTimeout
}

// stepStale answers messages of an older term that would otherwise leave
// their sender stuck.
func (r *raft) stepStale(m Message) {
	switch {
	case (r.checkQuorum || r.preVote) && (m.Type == MsgHeartbeat || m.Type == MsgApp):
		// A leader cut off from the cluster must learn of the newer term,
		// or (with PreVote) its followers could never depose it.
		r.send(Message{Type: MsgAppResp, To: m.From})
	case m.Type == MsgPreVote:
		r.send(Message{Type: MsgPreVoteResp, To: m.From, Reject: true})
	}
}

func (r *raft) handleVoteRequest(m Message) {
	resp := MsgVoteResp
	if m.Type == MsgPreVote {
		resp = MsgPreVoteResp
	}
	canVote := r.vote == m.From ||
		(r.vote == None && r.lead == None) ||
		(m.Type == MsgPreVote && m.Term > r.term)
	if canVote && !r.abstain && r.log.isUpToDate(m.Index, m.LogTerm) {
		// A granted vote is answered at the requested term so the
		// (pre-)candidate counts it.
		r.send(Message{Type: resp, To: m.From, Term: m.Term})
		if m.Type == MsgVote {
			r.electionElapsed = 0
			r.vote = m.From
		}
		return
	}
	r.send(Message{Type: resp, To: m.From, Reject: true})
}

func stepFollower(r *raft, m Message) {
	switch m.Type {
	case MsgApp:
		r.electionElapsed, r.lead = 0, m.From
		r.handleAppend(m)
	case MsgHeartbeat:
		r.electionElapsed, r.lead = 0, m.From
		r.log.commitTo(m.Commit)
		resp := Message{Type: MsgHeartbeatResp, To: m.From, Context: m.Context}
		if last := r.log.lastIndex(); m.Commit > last {
			// The leader counts entries this node acknowledged and lost
			// since (its storage was damaged): say where its log ends.
			resp.Reject, resp.RejectHint = true, last
		}
		r.send(resp)
	case MsgSnap:
		r.electionElapsed, r.lead = 0, m.From
		r.handleSnapshot(m)
	case MsgTimeoutNow:
		r.hup(true)
	case MsgReadIndexResp:
		r.readStates = append(r.readStates, ReadState{Index: m.Index, Ctx: m.Context})
	case MsgPropResp:
		r.propResults = append(r.propResults, ProposalResult{Ctx: m.Context, Index: m.Index, Term: m.Term, Dropped: m.Reject})
	case MsgProp:
		r.send(Message{Type: MsgPropResp, To: m.From, Context: m.Context, Reject: true})
	}
}

func stepCandidate(r *raft, m Message) {
	want := MsgVoteResp
	if r.role == PreCandidate {
		want = MsgPreVoteResp
	}
	switch m.Type {
	case want:
		if r.poll(m.From, !m.Reject) {
			r.wonCampaign(campaignKind(r.role))
		} else if r.countVotes(false) >= r.quorum() {
			// Lost: wait for the next timeout as a follower.
			r.becomeFollower(r.term, None)
		}
	case MsgApp, MsgHeartbeat, MsgSnap:
		// Someone won this term.
		r.becomeFollower(m.Term, m.From)
		r.step(r, m)
	case MsgProp:
		r.send(Message{Type: MsgPropResp, To: m.From, Context: m.Context, Reject: true})
	case MsgTimeoutNow:
		// Only a follower takes part in a leadership transfer.
	}
}

// handleAppend applies an append from the leader and answers it.
func (r *raft) handleAppend(m Message) {
	if m.Index < r.log.committed {
		r.send(Message{Type: MsgAppResp, To: m.From, Index: r.log.committed})
		return
	}
	if last, ok := r.log.maybeAppend(m.Index, m.LogTerm, m.Commit, m.Entries); ok {
		if hasConfChange(m.Entries) || r.conf.pendingIndex() > m.Index {
			// The log after m.Index may have changed: read its membership
			// entries again.
			r.conf.truncate(m.Index + 1)
			r.conf.appended(r.log.slice(m.Index+1, r.log.lastIndex()+1))
			r.syncConf()
		}
		r.send(Message{Type: MsgAppResp, To: m.From, Index: last})
		return
	}
	hint, hintTerm := r.log.conflictHint(m.Index)
	r.send(Message{Type: MsgAppResp, To: m.From, Index: m.Index, Reject: true,
		RejectHint: hint, LogTerm: hintTerm})
}

// handleSnapshot installs a snapshot from the leader unless the log already
// covers it, and answers with the index the log now matches up to.
func (r *raft) handleSnapshot(m Message) {
	s := m.Snapshot
	switch {
	case s == nil:
		return
	case s.Meta.Index <= r.log.committed:
		// Already covered.
	case r.log.matchTerm(s.Meta.Index, s.Meta.Term):
		// The log has the snapshot's last entry, so everything before it
		// matches too: just commit.
		r.log.commitTo(s.Meta.Index)
	default:
		r.log.restore(s)
		if len(s.Meta.ConfState.Voters) > 0 {
			r.conf.restored(s.Meta.ConfState)
		}
		r.syncConf()
		r.send(Message{Type: MsgAppResp, To: m.From, Index: r.log.lastIndex()})
		return
	}
	r.send(Message{Type: MsgAppResp, To: m.From, Index: r.log.committed})
}
