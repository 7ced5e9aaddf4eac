package raft

import (
	"fmt"
	"slices"
)

// stepLeader handles a message of the current term while leading.
func stepLeader(r *raft, m Message) {
	pr := r.prs[m.From]
	switch m.Type {
	case MsgReadIndex:
		if pr != nil {
			r.handleReadIndex(m.From, m.Context)
		}
		return
	case MsgProp:
		r.handleForwarded(m)
		return
	case MsgAppResp, MsgHeartbeatResp:
	default:
		return
	}
	if pr == nil {
		return
	}
	pr.recentActive = true
	if m.Type == MsgHeartbeatResp {
		r.handleHeartbeatResp(m, pr)
		return
	}
	if m.Reject {
		r.handleAppendReject(m, pr)
		return
	}
	r.handleAppendAck(m, pr)
}

func (r *raft) handleHeartbeatResp(m Message, pr *progress) {
	if m.Reject && pr.forgot(m.RejectHint) {
		r.logger.Warn("a follower lost entries it had acknowledged: sending them again", "node", r.id,
			"follower", m.From, "its_last_index", m.RejectHint)
	}
	pr.probeSent = false
	if pr.State == stateReplicate && pr.inflights.full() {
		pr.inflights.freeFirst()
	}
	if pr.Match < r.log.lastIndex() {
		r.sendAppend(m.From)
	}
	for _, rr := range r.readOnly.ack(m.From, m.Context, r.voters, r.id) {
		r.releaseRead(rr)
	}
}

// handleAppendReject moves Next back using the follower's conflict hint:
// past the whole conflicting term when the leader has no entry of it, or to
// just after the leader's last entry of that term. Each round trip skips at
// least one term, so repair takes O(terms) round trips.
func (r *raft) handleAppendReject(m Message, pr *progress) {
	next := m.RejectHint
	if m.LogTerm != 0 {
		if i, ok := r.log.lastIndexOfTerm(m.LogTerm, m.Index); ok {
			next = i + 1
		}
	}
	if pr.maybeDecrTo(m.Index, max(next, 1)) {
		if pr.State == stateReplicate {
			pr.becomeProbe()
		}
		r.sendAppend(m.From)
	}
}

func (r *raft) handleAppendAck(m Message, pr *progress) {
	wasPaused := pr.isPaused()
	if !pr.maybeUpdate(m.Index) {
		return
	}
	switch {
	case pr.State == stateProbe:
		pr.becomeReplicate()
	case pr.State == stateSnapshot && pr.Match >= pr.pendingSnapshot:
		pr.becomeProbe()
		pr.becomeReplicate()
	case pr.State == stateReplicate:
		pr.inflights.freeLE(m.Index)
	}
	committed := r.maybeCommit()
	switch {
	case r.role != Leader:
		return // removed, and stepped down
	case committed:
		r.bcastAppend()
	case wasPaused:
		r.sendAppend(m.From)
	}
	// Fill the window while there is something to send.
	for r.maybeSendAppend(m.From, false) {
	}
	if m.From == r.leadTransferee && pr.Match == r.log.lastIndex() {
		r.send(Message{Type: MsgTimeoutNow, To: m.From})
	}
}

// maybeCommit advances the commit index to the highest index replicated on
// a quorum, provided that entry is of the current term (section 5.4.2: a
// leader never commits entries of earlier terms by counting replicas). It
// reports whether the commit index moved.
func (r *raft) maybeCommit() bool {
	matches := make([]uint64, 0, len(r.voters))
	for _, id := range r.voters {
		matches = append(matches, r.prs[id].Match)
	}
	slices.Sort(matches)
	qi := matches[len(matches)-r.quorum()]
	if qi <= r.log.committed {
		return false
	}
	if t, _ := r.log.term(qi); t != r.term && !r.bugs.CommitOldTerm {
		return false
	}
	r.log.commitTo(qi)
	r.releaseWaitingReads()
	if !r.isVoter(r.id) && r.log.committed >= r.conf.pendingIndex() {
		// The change that removed this leader committed: it tells the
		// others, steps down (Raft thesis, section 4.2.2) and, no voter,
		// never campaigns again. Nothing is left to broadcast.
		r.bcastAppend()
		r.logger.Info("stepping down: removed from the configuration", "node", r.id, "term", r.term)
		r.becomeFollower(r.term, None)
		return false
	}
	return true
}

// committedInTerm reports whether the leader committed an entry of its own
// term, after which its commit index is at least every earlier leader's.
func (r *raft) committedInTerm() bool {
	t, _ := r.log.term(r.log.committed)
	return t == r.term
}

func (r *raft) sendAppend(to uint64) { r.maybeSendAppend(to, true) }

// maybeSendAppend sends the entries from to's Next on (or a snapshot when they
// were compacted away). With sendIfEmpty false it sends only when there are
// entries. It reports whether it sent anything.
func (r *raft) maybeSendAppend(to uint64, sendIfEmpty bool) bool {
	pr := r.prs[to]
	if to == r.id || pr.isPaused() {
		return false
	}
	prevTerm, errTerm := r.log.term(pr.Next - 1)
	ents, errEnts := r.log.entriesFrom(pr.Next, r.maxMsgBytes)
	if errTerm != nil || errEnts != nil {
		return r.sendSnapshot(to, pr)
	}
	if len(ents) == 0 && !sendIfEmpty {
		return false
	}
	var bytes uint64
	for i := range ents {
		bytes += uint64(len(ents[i].Data))
	}
	r.send(Message{Type: MsgApp, To: to, Index: pr.Next - 1, LogTerm: prevTerm,
		Entries: ents, Commit: r.log.committed})
	last := pr.Next - 1 + uint64(len(ents))
	pr.sentEntries(len(ents), bytes, last)
	return true
}

func (r *raft) sendSnapshot(to uint64, pr *progress) bool {
	s := r.log.snapshot
	if s == nil || !pr.recentActive {
		// Don't ship a snapshot to a follower that may be down.
		return false
	}
	pr.becomeSnapshot(s.Meta.Index)
	r.send(Message{Type: MsgSnap, To: to, Snapshot: s})
	return true
}

// bcastAppend sends appends to every follower that is not paused.
func (r *raft) bcastAppend() {
	r.needBcast = false
	for _, id := range r.members {
		if id != r.id {
			r.sendAppend(id)
		}
	}
}

// bcastHeartbeat sends a new round of heartbeats.
func (r *raft) bcastHeartbeat() {
	seq := r.readOnly.newRound(r.ticks, r.readMode == ReadLeaseBased)
	for _, id := range r.members {
		if id == r.id {
			continue
		}
		commit := min(r.prs[id].Match, r.log.committed)
		r.send(Message{Type: MsgHeartbeat, To: id, Commit: commit, Context: seq})
	}
}

// inLeaderLease reports whether a quorum acknowledged a heartbeat sent less
// than an election timeout ago, so no other leader can exist yet (given
// equal tick rates; see ReadLeaseBased).
func (r *raft) inLeaderLease() bool {
	start, ok := r.readOnly.leaseStart(r.voters, r.id)
	return ok && r.ticks < start+uint64(r.electionTimeout)
}

// flush sends what this round batched: appends for new proposals and one
// heartbeat for newly queued reads.
func (r *raft) flush() {
	if r.role != Leader {
		return
	}
	if r.needBcast {
		r.bcastAppend()
	}
	if r.readOnly.needBcast {
		r.bcastHeartbeat()
	}
}

// handleReadIndex serves a read request from a follower or from this node.
func (r *raft) handleReadIndex(from, ctx uint64) {
	rr := readRequest{index: r.log.committed, from: from, ctx: ctx}
	switch {
	case !r.committedInTerm():
		r.readOnly.waiting = append(r.readOnly.waiting, rr)
	case len(r.voters) == 1 && r.voters[0] == r.id || (r.readMode == ReadLeaseBased && r.inLeaderLease()):
		r.releaseRead(rr)
	default:
		r.readOnly.add(rr.index, from, ctx)
	}
}

// releaseWaitingReads handles reads that waited for the first commit of the
// leader's term.
func (r *raft) releaseWaitingReads() {
	if len(r.readOnly.waiting) == 0 || !r.committedInTerm() {
		return
	}
	waiting := r.readOnly.waiting
	r.readOnly.waiting = nil
	for _, rr := range waiting {
		r.handleReadIndex(rr.from, rr.ctx)
	}
}

func (r *raft) releaseRead(rr readRequest) {
	if rr.from == r.id {
		r.readStates = append(r.readStates, ReadState{Index: rr.index, Ctx: rr.ctx})
		return
	}
	r.send(Message{Type: MsgReadIndexResp, To: rr.from, Index: rr.index, Context: rr.ctx})
}

// tickElection is the tick of followers and candidates.
func (r *raft) tickElection() {
	r.electionElapsed++
	if r.electionElapsed >= r.electionTimeout {
		r.startupHold = false
	}
	if r.electionElapsed >= r.randomizedElectionTimeout {
		r.electionElapsed = 0
		if !r.isVoter(r.id) {
			// A learner, or a node not (yet) in its own configuration,
			// cannot campaign to replace a silent leader: it stops
			// honouring it, so that it grants votes again.
			r.lead = None
		}
		r.hup(false)
	}
}

// tickHeartbeat is the leader's tick: heartbeats, the quorum check, and
// timeouts of leadership transfers and snapshot sends.
func (r *raft) tickHeartbeat() {
	r.heartbeatElapsed++
	r.electionElapsed++
	if r.electionElapsed >= r.electionTimeout {
		r.electionElapsed = 0
		if r.checkQuorum && !r.quorumActive() {
			r.logger.Info("stepping down: no quorum heard within the election timeout", "node", r.id, "term", r.term)
			r.becomeFollower(r.term, None)
			return
		}
		r.leadTransferee = None
	}
	for _, id := range r.members {
		if pr := r.prs[id]; pr != nil && pr.State == stateSnapshot {
			pr.snapshotTicks++
			if pr.snapshotTicks >= r.electionTimeout {
				// The snapshot was probably lost; probe again.
				pr.becomeProbe()
				r.sendAppend(id)
			}
		}
	}
	if r.heartbeatElapsed >= r.heartbeatTimeout {
		r.heartbeatElapsed = 0
		r.bcastHeartbeat()
	}
}

// quorumActive reports whether a quorum answered since the last check, and
// starts a new check.
func (r *raft) quorumActive() bool {
	active := 0
	for _, id := range r.voters {
		if id == r.id || r.prs[id].recentActive {
			active++
		}
	}
	for id, pr := range r.prs {
		if id != r.id {
			pr.recentActive = false
		}
	}
	return active >= r.quorum()
}

// propose appends commands as new entries. Only a leader that is not
// handing off leadership accepts them.
func (r *raft) propose(data ...[]byte) (first uint64, err error) {
	if r.role != Leader || r.leadTransferee != None {
		return 0, ErrProposalDropped
	}
	ents := make([]Entry, len(data))
	for i, d := range data {
		ents[i] = Entry{Type: EntryNormal, Data: d}
	}
	first = r.log.lastIndex() + 1
	r.appendEntries(ents...)
	return first, nil
}

// handleForwarded appends commands a follower forwarded, as proposals of
// this leader's own, and tells it where; or that they were dropped (a
// transfer is in progress, or they are not plain commands).
func (r *raft) handleForwarded(m Message) {
	data := make([][]byte, 0, len(m.Entries))
	for _, e := range m.Entries {
		if e.Type != EntryNormal {
			data = nil
			break
		}
		data = append(data, e.Data)
	}
	if len(data) > 0 {
		if first, err := r.propose(data...); err == nil {
			r.send(Message{Type: MsgPropResp, To: m.From, Context: m.Context, Index: first})
			return
		}
	}
	r.send(Message{Type: MsgPropResp, To: m.From, Context: m.Context, Reject: true})
}

// proposeConfChange appends the membership change cc, which takes effect
// at once, on this leader as on every node that appends it. One change at
// a time, and only once the leader committed an entry of its own term (see
// doc.go); the conf-change-early bug drops both rules.
func (r *raft) proposeConfChange(cc ConfChange) (uint64, error) {
	if r.role != Leader || r.leadTransferee != None {
		return 0, ErrProposalDropped
	}
	switch {
	case r.bugs.ConfChangeEarly:
	case !r.committedInTerm():
		return 0, fmt.Errorf("%w: the leader has not yet committed an entry of its term %d", ErrConfChangePending, r.term)
	case r.conf.pendingIndex() > r.log.committed:
		return 0, fmt.Errorf("%w: the change at index %d is not committed yet", ErrConfChangePending, r.conf.pendingIndex())
	}
	next, err := r.conf.current().apply(cc)
	if err != nil {
		return 0, err
	}
	index := r.log.lastIndex() + 1
	r.appendEntries(Entry{Type: EntryConfChange, Data: ConfChangeEntry{Change: cc, State: next}.Marshal()})
	r.logger.Info("membership change proposed", "node", r.id, "term", r.term, "index", index, "change", cc.String())
	return index, nil
}

// transferLeadership hands leadership to a follower: once its log is up to
// date it is told to campaign at once. Proposals are refused meanwhile; the
// transfer is abandoned after an election timeout.
func (r *raft) transferLeadership(to uint64) error {
	if r.role != Leader {
		return ErrNotLeader
	}
	if !r.isVoter(to) {
		return ErrUnknownPeer
	}
	if to == r.id || to == r.leadTransferee {
		return nil
	}
	r.leadTransferee = to
	r.electionElapsed = 0
	if r.prs[to].Match == r.log.lastIndex() {
		r.send(Message{Type: MsgTimeoutNow, To: to})
	} else {
		r.sendAppend(to)
	}
	return nil
}
