package node

import (
	"fmt"
	"time"

	"chaos/eventlog"
	"chaos/node/kv"
	"chaos/node/nodeapi"
	"chaos/raft"
)

// loopState is the event loop's own bookkeeping; only the loop touches it.
type loopState struct {
	waiting     map[uint64]pendingProposal // log index -> the write waiting for it
	forwarded   map[uint64][]*proposal     // ctx -> writes forwarded to the leader, awaiting where it put them
	readQueue   []*readRequest             // reads that wait to ask for a read index
	asked       []*readRequest             // the reads the read index asked for (askedCtx) will serve
	askedCtx    uint64                     // the ctx of the read index asked for and not answered, 0 if none
	askedAt     uint64                     // ticks when it was asked
	ticks       uint64                     // ticks so far
	readReady   []indexedRead              // reads with a read index, awaiting apply
	applied     uint64
	commit      uint64
	snapIndex   uint64
	lastLead    uint64
	lastRole    raft.Role
	lastVote    [2]uint64             // term, vote
	dirty       map[string]dirtyValue // dirty-read bug: values proposed, not yet applied
	appendLimit nodeapi.AppendLimit   // the hook's append limit raft has (zero: none)
	conf        raft.ConfState        // the configuration as of applied
	peers       map[uint64]string     // the transport's peers: members in force but this node
	synced      raft.ConfState        // the configuration syncPeers last added the peers of
	durableTerm uint64                // the term of the hard state last made durable
	catchUp     catchUp               // an abstaining node's way back to its vote (catchup.go)
}

type pendingProposal struct {
	term uint64
	p    *proposal
}

type indexedRead struct {
	index uint64
	r     *readRequest
}

type dirtyValue struct {
	value   string
	deleted bool
	index   uint64
}

// maxBatch bounds how many queued requests one loop iteration takes.
const maxBatch = 1024

// loop is the single goroutine that owns the raft core: it ticks, steps
// messages, proposes, and handles each Ready in the order of the raft
// persistence contract.
func (s *Server) loop() {
	defer s.loopWG.Done()
	ls := &loopState{waiting: map[uint64]pendingProposal{}, forwarded: map[uint64][]*proposal{},
		dirty: map[string]dirtyValue{}, conf: s.startConf}
	st := s.rn.Status()
	ls.peers = s.peerAddrs(st.Conf) // what the transport started with
	ls.applied, ls.snapIndex, ls.lastRole, ls.durableTerm = st.Applied, st.Applied, st.Role, st.Term
	tk := &ticker{clock: s.clock, interval: s.cfg.HeartbeatInterval}
	poll := time.NewTicker(s.cfg.HeartbeatInterval / 4)
	defer poll.Stop()
	defer ls.failAll()
	for {
		select {
		case <-s.stopC:
			return
		case <-poll.C:
			// Messages that arrived while the loop was busy (a slow fsync,
			// say) go in before the ticks that piled up meanwhile, so a
			// stalled loop does not mistake its own delay for a silent
			// quorum or a dead leader.
			s.drainReceived()
			s.applyAppendLimit(ls)
			if s.clockFile != nil {
				s.clockFile.poll()
			}
			for range tk.due() {
				s.rn.Tick()
				ls.ticks++
			}
			s.retryReads(ls)
			if err := s.pollCatchUp(ls); err != nil {
				s.fail(err)
				return
			}
		case in := <-s.recvC:
			s.step(in)
		case p := <-s.propC:
			s.proposeBatch(ls, p)
		case r := <-s.readC:
			s.readBatch(ls, r)
		case req := <-s.confC:
			s.proposeConf(ls, req)
		}
		s.drainInputs(ls)
		for s.askReads(ls); s.rn.HasReady(); s.askReads(ls) {
			if err := s.handleReady(ls); err != nil {
				s.fail(err)
				return
			}
		}
	}
}

// fail ends the event loop on the fatal error err: the node then stops as
// a killed one does (see Server.crashed).
func (s *Server) fail(err error) {
	s.log.Error("fatal: event loop stopped", "err", err)
	s.crashed.Store(true)
	s.failed <- err
}

// maxInflightLimit caps the hook's window of appends in flight: a window
// so wide is no limit.
const maxInflightLimit = 1 << 16

// applyAppendLimit hands raft the append limit the fault hook set, or the
// configured one where the hook's is 0.
func (s *Server) applyAppendLimit(ls *loopState) {
	v := s.appendLimitNow()
	if v == ls.appendLimit {
		return
	}
	ls.appendLimit = v
	maxBytes := v.MaxBytes
	if maxBytes == 0 {
		maxBytes = s.cfg.MaxAppendBytes
	}
	s.rn.SetMaxMsgBytes(maxBytes)
	s.rn.SetMaxInflightMsgs(int(min(v.MaxInflight, maxInflightLimit))) // 0: raft's default, the node's own
}

// drainInputs takes the messages, proposals and reads already queued (at
// most maxBatch handovers), so that one Ready, one WAL write and at most one
// fsync cover all of them: under load a node then writes batches as large as
// what arrived during its last fsync, instead of one Ready per arrival.
func (s *Server) drainInputs(ls *loopState) {
	for range maxBatch {
		select {
		case in := <-s.recvC:
			s.step(in)
		case p := <-s.propC:
			s.proposeBatch(ls, p)
		case r := <-s.readC:
			s.readBatch(ls, r)
		default:
			return
		}
	}
}

// drainReceived steps every message batch already queued.
func (s *Server) drainReceived() {
	for range cap(s.recvC) {
		select {
		case in := <-s.recvC:
			s.step(in)
		default:
			return
		}
	}
}

// step hands raft what the transport received: the messages of a batch,
// or the end of a peer's connection (fast failover: raft.RawNode.PeerLost).
func (s *Server) step(in inbound) {
	if in.lost != 0 {
		s.rn.PeerLost(in.lost)
		return
	}
	for _, m := range in.msgs {
		if err := s.rn.Step(m); err != nil {
			s.log.Warn("dropped a peer message", "err", err)
		}
	}
}

// proposeBatch proposes first and everything else already queued, as one
// batch of entries.
func (s *Server) proposeBatch(ls *loopState, first *proposal) {
	batch := drain(first, s.propC)
	data := make([][]byte, len(batch))
	for i, p := range batch {
		data[i] = p.data
	}
	if s.rn.Status().Role != raft.Leader {
		// A follower hands the batch to its leader through raft, not HTTP:
		// the leader appends it as its own, and says where.
		ctx := s.nextCtx.Add(1)
		if err := s.rn.ForwardProposal(ctx, data...); err != nil {
			failProposals(batch, errNoLeader)
			return
		}
		ls.forwarded[ctx] = batch
		return
	}
	index, err := s.rn.Propose(data...)
	if err != nil {
		failProposals(batch, errNoLeader)
		return
	}
	s.metrics.proposals.Add(float64(len(batch)))
	term := s.rn.Status().Term
	for i, p := range batch {
		ls.waiting[index+uint64(i)] = pendingProposal{term: term, p: p}
		if s.bugs.dirtyRead {
			ls.dirty[p.cmd.Key] = dirtyValue{value: p.cmd.Value, deleted: p.cmd.Op == kv.OpDelete, index: index + uint64(i)}
		}
	}
}

// drain is first and what is already queued on ch behind it, maxBatch
// requests at most; it never waits.
func drain[T any](first T, ch <-chan T) []T {
	batch := []T{first}
	for len(batch) < maxBatch {
		select {
		case x := <-ch:
			batch = append(batch, x)
		default:
			return batch
		}
	}
	return batch
}

// failProposals answers every proposal of batch with err.
func failProposals(batch []*proposal, err error) {
	for _, p := range batch {
		p.done <- proposalResult{err: err}
	}
}

// readBatch queues first and the reads queued behind it to ask for a read
// index (askReads).
func (s *Server) readBatch(ls *loopState, first *readRequest) {
	batch := drain(first, s.readC)
	if s.bugs.dirtyRead && s.rn.Status().Role == raft.Leader {
		for _, r := range batch {
			r.done <- s.dirtyRead(ls, r.key)
		}
		return
	}
	ls.readQueue = append(ls.readQueue, batch...)
}

// askReads asks raft for one read index for every queued read, unless one
// is asked for already: reads that arrive meanwhile wait for its answer and
// then share the next, so that under load one exchange with the leader
// (and one heartbeat round of its) serves many reads. Each read is served
// by a read index asked for after it arrived, which is what makes it
// linearizable. It must not run while a Ready is being handled.
func (s *Server) askReads(ls *loopState) {
	if ls.askedCtx != 0 || len(ls.readQueue) == 0 {
		return
	}
	ctx := s.nextCtx.Add(1)
	if err := s.rn.ReadIndex(ctx); err != nil {
		ls.readQueue = failReads(ls.readQueue, errNoLeader)
		return
	}
	ls.asked, ls.readQueue = ls.readQueue, nil
	ls.askedCtx, ls.askedAt = ctx, ls.ticks
	s.metrics.readIndexes.Inc()
}

// retryReads asks again for a read index asked for an election timeout ago
// and not answered (the request or its answer was lost, or the link to the
// leader is that slow). It asks under the same ctx, so an answer to either
// ask serves the reads: each was given by the leader after they arrived. A
// new ctx would make a link slower than an election timeout serve no read.
func (s *Server) retryReads(ls *loopState) {
	if ls.askedCtx == 0 || ls.ticks-ls.askedAt < uint64(s.cfg.ElectionTimeout/s.cfg.HeartbeatInterval) {
		return
	}
	if err := s.rn.ReadIndex(ls.askedCtx); err != nil {
		ls.asked, ls.askedCtx = failReads(ls.asked, errNoLeader), 0
		return
	}
	ls.askedAt = ls.ticks
	s.metrics.readIndexes.Inc()
}

// failReads answers every read of reads with err, and returns reads emptied.
func failReads(reads []*readRequest, err error) []*readRequest {
	for _, r := range reads {
		r.done <- readResult{err: err}
	}
	return reads[:0]
}

// dirtyRead is the dirty-read planted bug: the leader answers from values
// it proposed but that may never commit.
func (s *Server) dirtyRead(ls *loopState, key string) readResult {
	if d, ok := ls.dirty[key]; ok {
		return readResult{value: d.value, found: !d.deleted}
	}
	v, ok := s.store.Get(key)
	return readResult{value: v, found: ok}
}

// handleReady persists, sends, applies and advances, in that order, with
// one shortcut: committed entries this node already made durable in an
// earlier Ready (all of a leader's: it counts its own copy only once
// durable) are applied, and their writers and the reads waiting on them
// answered, before this Ready's new entries are written, so that a write
// is answered one fsync sooner. Only entries of this Ready wait for its
// fsync (a follower can learn that they committed in the append that
// brings them), and nothing is applied before a snapshot is installed or
// a new term is durable.
func (s *Server) handleReady(ls *loopState) error {
	rd := s.rn.Ready()
	s.noteSoftState(ls, rd.SoftState)
	var img snapshotImage
	if rd.Snapshot != nil {
		var err error
		if img, err = decodeImage(rd.Snapshot.Data); err != nil {
			return fmt.Errorf("install snapshot %d: %w", rd.Snapshot.Meta.Index, err)
		}
		s.learnImage(img)
	}
	s.learnEntries(rd.Entries)
	s.syncPeers(ls)
	if rd.SendFirst {
		// A leader's appends go out while it writes them (raft.Ready.SendFirst):
		// its followers' fsyncs overlap its own. A role change reaches the
		// event log first, as below.
		if rd.SoftState != nil {
			s.events.Flush()
		}
		s.trans.Send(rd.Messages)
		rd.Messages = nil
	}
	committed := rd.CommittedEntries
	// Not ahead of a new term's write: a role event of that term is in the
	// event log already, and the raft check excuses it after a crash only
	// as the last event of that life.
	early := rd.Snapshot == nil && (rd.HardState.IsEmpty() || rd.HardState.Term == ls.durableTerm)
	if early {
		s.takeRound(ls, rd)
		n := durablePrefix(committed, rd.Entries)
		if err := s.apply(ls, committed[:n]); err != nil {
			return err
		}
		committed = committed[n:]
		s.serveReads(ls)
	}
	if err := s.persist(rd); err != nil {
		return err
	}
	if !rd.HardState.IsEmpty() {
		ls.durableTerm = rd.HardState.Term
	}
	if voted := s.noteVote(ls); voted || rd.SoftState != nil {
		// A vote or a role change reaches the event log before any message
		// that shows it to a peer, so that a node killed right after cannot
		// lose the evidence the raft check needs (other events are written
		// out every eventlog.FlushInterval).
		s.events.Flush()
	}
	s.trans.Send(rd.Messages)
	if s.bugs.ackBeforeCommit {
		s.ackAppended(ls, rd.Entries)
	}
	if rd.Snapshot != nil {
		if err := s.restoreSnapshot(ls, rd.Snapshot, img); err != nil {
			return err
		}
	}
	if !early {
		s.takeRound(ls, rd)
	}
	if err := s.apply(ls, committed); err != nil {
		return err
	}
	s.serveReads(ls)
	s.rn.Advance()
	s.publishStatus()
	return s.maybeSnapshot(ls)
}

// takeRound takes what a Ready says before its committed entries are
// applied: where the leader put the writes this node forwarded, the new
// commit index (logged before any entry it covers is applied), and the
// reads whose read index is known.
func (s *Server) takeRound(ls *loopState, rd raft.Ready) {
	s.placeForwarded(ls, rd.ProposalResults)
	s.noteCommit(ls, rd.HardState)
	s.takeReadStates(ls, rd.ReadStates)
}

// durablePrefix is how many of committed precede entries, the Ready's new
// entries: those were made durable by earlier Readys (all of them when
// there are no new entries).
func durablePrefix(committed, entries []raft.Entry) int {
	if len(entries) == 0 {
		return len(committed)
	}
	first := entries[0].Index
	n := 0
	for n < len(committed) && committed[n].Index < first {
		n++
	}
	return n
}

// persist writes a Ready's snapshot, hard state and entries, durably when
// raft says it must (raft.Ready.MustSync): a hard state that only moves the
// commit index is queued for the next fsynced write (wal.WAL.Write), as
// losing it in a crash only makes the commit index a restart begins with
// older.
func (s *Server) persist(rd raft.Ready) error {
	start := time.Now()
	if rd.Snapshot != nil {
		if err := s.disk.saveSnapshot(*rd.Snapshot); err != nil {
			return fmt.Errorf("persist snapshot: %w", err)
		}
	}
	if err := s.disk.save(rd.HardState, rd.Entries, rd.MustSync); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	if rd.MustSync {
		s.metrics.fsync.Observe(time.Since(start).Seconds())
	}
	return nil
}

// takeReadStates moves the reads whose read index raft confirmed to
// readReady, where serveReads answers them once applied.
func (s *Server) takeReadStates(ls *loopState, states []raft.ReadState) {
	for _, rs := range states {
		if rs.Ctx != ls.askedCtx || ls.askedCtx == 0 {
			continue // answered already (retryReads asked twice), or a read index failed
		}
		for _, r := range ls.asked {
			ls.readReady = append(ls.readReady, indexedRead{index: rs.Index, r: r})
		}
		ls.asked, ls.askedCtx = nil, 0
	}
}

// placeForwarded learns where the leader appended writes this node
// forwarded: they then wait for their index like the leader's own. A batch
// the leader dropped certainly failed; one whose first entry this node
// already applied before the answer came has an outcome it cannot tell.
func (s *Server) placeForwarded(ls *loopState, results []raft.ProposalResult) {
	for _, res := range results {
		batch, ok := ls.forwarded[res.Ctx]
		if !ok {
			continue
		}
		delete(ls.forwarded, res.Ctx)
		if res.Dropped {
			failProposals(batch, errNoLeader)
			continue
		}
		for i, p := range batch {
			index := res.Index + uint64(i)
			switch {
			case index <= ls.applied:
				p.done <- proposalResult{err: errTimeout}
			default:
				ls.waiting[index] = pendingProposal{term: res.Term, p: p}
			}
		}
	}
}

// failForwarded gives up on the writes forwarded to a leader that has
// not said where it put them: it may have, so their outcome is unknown.
func (ls *loopState) failForwarded() {
	for ctx, batch := range ls.forwarded {
		failProposals(batch, errTimeout)
		delete(ls.forwarded, ctx)
	}
}

// noteSoftState records role and leader changes, and fails reads whose
// confirming leader is gone.
func (s *Server) noteSoftState(ls *loopState, ss *raft.SoftState) {
	if ss == nil {
		return
	}
	term := s.rn.Status().Term
	if ss.Role != ls.lastRole {
		s.events.Emit(eventlog.Event{Event: eventlog.KindRole, Role: roleName(ss.Role), Term: term, Leader: s.name(ss.Lead)})
		if ss.Role == raft.Candidate {
			s.metrics.elections.Inc()
		}
		ls.lastRole = ss.Role
	}
	s.metrics.term.Set(float64(term))
	if ss.Role == raft.Leader {
		s.metrics.isLeader.Set(1)
	} else {
		s.metrics.isLeader.Set(0)
	}
	if ss.Lead != ls.lastLead {
		ls.asked = failReads(ls.asked, errLeaderChanged)
		ls.askedCtx = 0 // the queued reads ask the new leader
		ls.failForwarded()
		clear(ls.dirty)
		ls.lastLead = ss.Lead
	}
}

// roleName is r as the event log names it.
func roleName(r raft.Role) eventlog.Role {
	switch r {
	case raft.Follower:
		return eventlog.Follower
	case raft.PreCandidate:
		return eventlog.PreCandidate
	case raft.Candidate:
		return eventlog.Candidate
	case raft.Leader:
		return eventlog.Leader
	}
	return eventlog.Role(r.String())
}

// noteVote logs this node's vote when it changed, once durable, and
// reports whether it logged one.
func (s *Server) noteVote(ls *loopState) (voted bool) {
	st := s.rn.Status()
	if v := [2]uint64{st.Term, st.Vote}; st.Vote != 0 && v != ls.lastVote {
		s.events.Emit(eventlog.Event{Event: eventlog.KindVote, Term: st.Term, For: s.name(st.Vote)})
		ls.lastVote = v
		return true
	}
	return false
}

// noteCommit logs a rise of the commit index, before any entry it covers
// is applied.
func (s *Server) noteCommit(ls *loopState, hs raft.HardState) {
	if hs.Commit > ls.commit {
		ls.commit = hs.Commit
		s.events.Emit(eventlog.Event{Event: eventlog.KindCommit, Index: hs.Commit})
		s.metrics.commitIndex.Set(float64(hs.Commit))
	}
}

// apply applies committed entries in order and answers their writers.
func (s *Server) apply(ls *loopState, ents []raft.Entry) error {
	for _, e := range ents {
		var res kv.Result
		if e.Type == raft.EntryConfChange {
			if err := s.applyConf(ls, e); err != nil {
				return err
			}
		}
		if e.Type == raft.EntryNormal {
			cmd, err := kv.DecodeCommand(e.Data)
			if err != nil {
				return fmt.Errorf("apply entry %d: %w", e.Index, err)
			}
			res = s.store.Apply(cmd)
			if d, ok := ls.dirty[cmd.Key]; ok && d.index <= e.Index {
				delete(ls.dirty, cmd.Key)
			}
		}
		s.events.Emit(eventlog.Event{Event: eventlog.KindApply, Index: e.Index, Term: e.Term, Hash: kv.Hash(e.Data)})
		if w, ok := ls.waiting[e.Index]; ok {
			delete(ls.waiting, e.Index)
			if w.term == e.Term {
				w.p.done <- proposalResult{res: res}
			} else {
				w.p.done <- proposalResult{err: errLost}
			}
		}
		ls.applied = e.Index
	}
	s.metrics.applies.Add(float64(len(ents)))
	s.metrics.appliedIndex.Set(float64(ls.applied))
	return nil
}

// ackAppended is the ack-before-commit planted bug: the leader answers
// writes as soon as their entries are durable locally, before they commit.
func (s *Server) ackAppended(ls *loopState, ents []raft.Entry) {
	for _, e := range ents {
		w, ok := ls.waiting[e.Index]
		if !ok || w.term != e.Term || e.Type != raft.EntryNormal {
			continue // a membership change is answered once applied, bug or not
		}
		delete(ls.waiting, e.Index)
		res := kv.Result{OK: true}
		if c := w.p.cmd; c.Op == kv.OpCAS {
			cur, found := s.store.Get(c.Key)
			res = kv.Result{OK: found && cur == c.From, Current: cur, Found: found}
		}
		w.p.done <- proposalResult{res: res}
	}
}

// serveReads answers reads whose read index has been applied. The
// stale-read bug is served elsewhere: it never asks for a read index.
func (s *Server) serveReads(ls *loopState) {
	kept := ls.readReady[:0]
	for _, ir := range ls.readReady {
		if ir.index > ls.applied {
			kept = append(kept, ir)
			continue
		}
		v, ok := s.store.Get(ir.r.key)
		ir.r.done <- readResult{value: v, found: ok}
	}
	ls.readReady = kept
}

func (s *Server) restoreSnapshot(ls *loopState, sn *raft.Snapshot, img snapshotImage) error {
	if err := s.store.Restore(img.Store); err != nil {
		return err
	}
	ls.applied, ls.snapIndex, ls.conf = sn.Meta.Index, sn.Meta.Index, img.conf()
	// Writes waiting at indexes the snapshot covers will never be applied
	// one by one here; whether they made it is unknown to this node.
	for i, w := range ls.waiting {
		if i <= sn.Meta.Index {
			w.p.done <- proposalResult{err: errTimeout}
			delete(ls.waiting, i)
		}
	}
	s.events.Emit(eventlog.Event{Event: eventlog.KindRestore, Index: sn.Meta.Index, Term: sn.Meta.Term})
	s.emitConf(sn.Meta.Index, sn.Meta.Term, "", ls.conf)
	return nil
}

// maybeSnapshot compacts the log every SnapshotEntries applied entries.
func (s *Server) maybeSnapshot(ls *loopState) error {
	if ls.applied < ls.snapIndex+s.cfg.SnapshotEntries {
		return nil
	}
	data, err := s.encodeImage(ls.conf)
	if err != nil {
		return err
	}
	sn, err := s.rn.Compact(ls.applied, data)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if err := s.disk.saveSnapshot(sn); err != nil {
		return fmt.Errorf("persist snapshot: %w", err)
	}
	ls.snapIndex = sn.Meta.Index
	s.events.Emit(eventlog.Event{Event: eventlog.KindSnapshot, Index: sn.Meta.Index, Term: sn.Meta.Term})
	return nil
}

// failAll answers everything still waiting when the loop exits.
func (ls *loopState) failAll() {
	for i, w := range ls.waiting {
		w.p.done <- proposalResult{err: errTimeout}
		delete(ls.waiting, i)
	}
	ls.failForwarded()
	ls.asked = failReads(ls.asked, errStopping)
	ls.readQueue = failReads(ls.readQueue, errStopping)
	for _, ir := range ls.readReady {
		ir.r.done <- readResult{err: errStopping}
	}
	ls.readReady = nil
}
