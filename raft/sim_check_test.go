package raft

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// injectFaults draws this tick's faults: crashes and restarts, partitions
// and their healing.
func (s *simulation) injectFaults() {
	for _, n := range s.nodes {
		if n.rn == nil && !n.retired && s.now >= n.downUntil {
			n.restarts++
			s.start(n)
			s.logf("restart n%d (term %d, %d entries on disk)", n.id, n.disk.hs.Term, len(n.disk.ents))
		}
	}
	if s.rng.Float64() < s.cfg.crashRate {
		n := s.nodes[s.rng.IntN(len(s.nodes))]
		if l := s.leader(); l != nil && s.rng.IntN(2) == 0 {
			n = l // leaders are the interesting victims
		}
		if n.rn != nil {
			s.crashed(n)
			// Short outages restart a node while the election it voted in
			// is still running; long ones make it fall behind.
			down := 1 + s.rng.IntN(s.cfg.electionTick/2)
			if s.rng.IntN(2) == 0 {
				down = 1 + s.rng.IntN(3*s.cfg.electionTick)
			}
			n.downUntil = s.now + down
			s.logf("crash n%d until tick %d", n.id, n.downUntil)
		}
	}
	if s.cfg.spuriousLostRate > 0 && s.lostRng.Float64() < s.cfg.spuriousLostRate {
		// A live leader's connection ends (it redialed, or a middlebox
		// reset it): the follower must not break safety acting on it.
		if l := s.leader(); l != nil {
			to := s.nodes[s.lostRng.IntN(len(s.nodes))]
			s.lost = append(s.lost, lostConn{at: s.now, to: to.id, peer: l.id})
			s.logf("n%d's connection from its live leader n%d ends", to.id, l.id)
		}
	}
	if s.partitionUntil != 0 && s.now >= s.partitionUntil {
		s.net.heal()
		s.partitionUntil = 0
		s.logf("partition healed")
	}
	if s.partitionUntil == 0 && s.rng.Float64() < s.cfg.partitionRate {
		s.partition()
	}
}

// partition cuts the cluster in two: one node alone, or random halves.
func (s *simulation) partition() {
	ids := s.peers()
	s.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	if l := s.leader(); l != nil && s.rng.IntN(2) == 0 {
		i := slices.Index(ids, l.id)
		ids[0], ids[i] = ids[i], ids[0] // isolate the leader
	}
	k := 1
	if s.rng.IntN(2) == 0 {
		k = 1 + s.rng.IntN(len(ids)-1)
	}
	s.net.isolate(ids[:k], ids[k:])
	s.partitionUntil = s.now + 10 + s.rng.IntN(100)
	s.logf("partition %v | %v until tick %d", ids[:k], ids[k:], s.partitionUntil)
}

// healAll ends the fault phase: every node up, the network whole and
// reliable, and a probe command to be committed everywhere.
func (s *simulation) healAll() {
	for _, n := range s.nodes {
		if n.rn == nil && !n.retired {
			n.restarts++
			s.start(n)
		}
	}
	s.net.heal()
	s.net.dropRate, s.net.dupRate = 0, 0
	s.partitionUntil = 0
	s.healed = true
	s.marker = []byte("liveness-probe")
	s.logf("faults stopped; all nodes up and connected")
}

// handleReady processes one Ready the way the persistence contract demands
// (persist, send, apply, advance) and checks the invariants on the way.
func (s *simulation) handleReady(n *simNode) {
	rd := n.rn.Ready()
	if rd.SoftState != nil {
		s.logf("n%d is %v (term %d, leader %d)", n.id, rd.SoftState.Role, n.rn.Status().Term, rd.SoftState.Lead)
		if rd.SoftState.Role == Leader {
			s.checkLeader(n)
		}
	}
	committed := rd.CommittedEntries
	if s.cfg.applyEarly && rd.Snapshot == nil {
		k := 0
		for k < len(committed) && (len(rd.Entries) == 0 || committed[k].Index < rd.Entries[0].Index) {
			s.apply(n, committed[k])
			k++
		}
		committed = committed[k:]
	}
	if rd.SendFirst && s.orderRng.IntN(2) == 0 {
		// A leader sends before it writes, and may crash in between.
		for _, m := range rd.Messages {
			s.net.send(s.now, m)
		}
		rd.Messages = nil
		if !s.healed && s.cfg.crashRate > 0 && len(rd.Entries) > 0 && s.orderRng.Float64() < 0.05 {
			s.crashed(n)
			n.downUntil = s.now + 1 + s.orderRng.IntN(s.cfg.electionTick)
			s.logf("crash n%d after sending its appends, before writing them, until tick %d", n.id, n.downUntil)
			return
		}
	}
	if !rd.HardState.IsEmpty() {
		n.disk.hs = rd.HardState
	}
	if rd.Snapshot != nil {
		s.persistSnapshot(n, rd.Snapshot)
	}
	if len(rd.Entries) > 0 {
		s.persistEntries(n, rd.Entries)
	}
	for _, m := range rd.Messages {
		s.net.send(s.now, m)
	}
	if rd.Snapshot != nil {
		n.smIndex, n.smChain = rd.Snapshot.Meta.Index, n.disk.snapChain
	}
	for _, e := range committed {
		s.apply(n, e)
	}
	for _, rs := range rd.ReadStates {
		s.checkRead(n, rs)
	}
	n.rn.Advance()
	s.checkCommitDurable(n)
	s.maybeCompact(n)
	if s.cfg.voteCrashRate > 0 && !s.healed && grantsVote(rd.Messages) && s.rng.Float64() < s.cfg.voteCrashRate {
		// Power fails right after a vote went out: the vote must survive.
		s.crashed(n)
		n.downUntil = s.now + 1 + s.rng.IntN(3)
		s.logf("crash n%d right after voting, until tick %d", n.id, n.downUntil)
	}
}

// checkCommitDurable checks that a leader's commit index is on the disks
// of a majority of its voters: a crash loses nothing else, so a leader
// that counted a copy not yet written (its own before Advance, say) would
// show here. It runs wherever the commit index can rise (a step, Advance),
// before a configuration change can be proposed: the majority is of the
// voters maybeCommit counted.
func (s *simulation) checkCommitDurable(n *simNode) {
	r := n.rn.r
	c := r.log.committed
	if r.role != Leader {
		return
	}
	if r.term != n.commitTerm {
		// What it committed before it led was counted by another leader,
		// on the voters of its time.
		n.commitTerm, n.commitChecked = r.term, c
		return
	}
	if c <= n.commitChecked || c <= r.log.snapIndex {
		return
	}
	n.commitChecked = c
	term, _ := r.log.term(c)
	voters := r.conf.current().Voters
	holding := 0
	for _, id := range voters {
		if s.nodes[id-1].disk.holds(c, term) {
			holding++
		}
	}
	if holding <= len(voters)/2 {
		s.failf("n%d committed %d (term %d), which only %d of its %d voters hold on disk", n.id, c, term, holding, len(voters))
	}
}

// holds reports whether the disk holds the entry at index of term, or a
// snapshot past it.
func (d *simDisk) holds(index, term uint64) bool {
	var base uint64
	if d.snap != nil {
		base = d.snap.Meta.Index
	}
	if index <= base {
		return true
	}
	i := index - base - 1
	return i < uint64(len(d.ents)) && d.ents[i].Term == term
}

func grantsVote(msgs []Message) bool {
	for _, m := range msgs {
		if m.Type == MsgVoteResp && !m.Reject {
			return true
		}
	}
	return false
}

// checkLeader checks Election Safety (one leader per term) and Leader
// Completeness (a new leader holds every entry committed so far).
func (s *simulation) checkLeader(n *simNode) {
	term := n.rn.Status().Term
	if l, ok := s.leaders[term]; ok && l != n.id {
		s.failf("Election Safety: n%d and n%d both lead term %d", l, n.id, term)
		return
	}
	s.leaders[term] = n.id
	c := s.maxApplied
	if c <= n.rn.r.log.snapIndex {
		return
	}
	t, err := n.rn.r.log.term(c)
	if want := s.applied[c].term; err != nil || t != want {
		s.failf("Leader Completeness: n%d leads term %d but its entry at committed index %d has term %d (%v), want %d",
			n.id, term, c, t, err, want)
	}
}

func encodeSimSnapshot(index, chain uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, index)
	return binary.LittleEndian.AppendUint64(b, chain)
}

func (s *simulation) persistSnapshot(n *simNode, snap *Snapshot) {
	if len(snap.Data) != 16 || binary.LittleEndian.Uint64(snap.Data) != snap.Meta.Index {
		s.failf("n%d received a snapshot whose data does not match its index %d", n.id, snap.Meta.Index)
		return
	}
	chain := binary.LittleEndian.Uint64(snap.Data[8:])
	if a, ok := s.applied[snap.Meta.Index]; ok && a.chain != chain {
		s.failf("State Machine Safety: snapshot at %d sent to n%d differs from what n%d applied", snap.Meta.Index, n.id, a.node)
		return
	}
	n.disk.snap, n.disk.snapChain = snap, chain
	n.disk.ents, n.disk.chain = nil, nil
}

// persistEntries appends to n's disk, replacing any suffix the entries
// overwrite, and checks Log Matching: two logs that hold an entry with the
// same index and term hold the same entries up to it.
func (s *simulation) persistEntries(n *simNode, ents []Entry) {
	d := &n.disk
	var base, prev uint64
	if d.snap != nil {
		base, prev = d.snap.Meta.Index, d.snapChain
	}
	first := ents[0].Index
	if first <= base || first-base-1 > uint64(len(d.ents)) {
		s.failf("n%d was asked to persist entries from %d, but its disk holds (%d, %d]", n.id, first, base, base+uint64(len(d.ents)))
		return
	}
	keep := first - base - 1
	d.ents, d.chain = d.ents[:keep], d.chain[:keep]
	if keep > 0 {
		prev = d.chain[keep-1]
	}
	for _, e := range ents {
		prev = chainHash(prev, e.Term, e.Data)
		key := [2]uint64{e.Index, e.Term}
		if c, ok := s.logChain[key]; ok && c != prev {
			s.failf("Log Matching: n%d holds entry %d of term %d with a history that differs from another node's", n.id, e.Index, e.Term)
			return
		}
		s.logChain[key] = prev
		d.ents = append(d.ents, e)
		d.chain = append(d.chain, prev)
	}
}

// apply checks State Machine Safety: every node applies the same entry at
// each index, in index order.
func (s *simulation) apply(n *simNode, e Entry) {
	if e.Index != n.smIndex+1 {
		s.failf("n%d applied index %d after %d", n.id, e.Index, n.smIndex)
		return
	}
	n.smIndex, n.smChain = e.Index, chainHash(n.smChain, e.Term, e.Data)
	if a, ok := s.applied[e.Index]; ok {
		if a.chain != n.smChain {
			s.failf("State Machine Safety: at index %d n%d applied an entry of term %d, but n%d applied one of term %d",
				e.Index, n.id, e.Term, a.node, a.term)
		}
	} else {
		s.applied[e.Index] = appliedEntry{term: e.Term, chain: n.smChain, node: n.id}
	}
	s.maxApplied = max(s.maxApplied, e.Index)
	if e.Type == EntryConfChange && s.cfg.confChangeRate > 0 {
		s.retireRemoved(e)
	}
	if s.marker != nil && s.markerIndex == 0 && bytes.Equal(e.Data, s.marker) {
		s.markerIndex = e.Index
	}
}

// checkRead checks that a read index covers every entry that was applied
// anywhere before the read was issued (linearizable reads).
func (s *simulation) checkRead(n *simNode, rs ReadState) {
	p, ok := s.reads[rs.Ctx]
	if !ok {
		return
	}
	delete(s.reads, rs.Ctx)
	if p.node != n.id {
		s.failf("read %d issued at n%d was released at n%d", rs.Ctx, p.node, n.id)
	} else if rs.Index < p.minIndex {
		s.failf("stale read: read %d at n%d got read index %d, but index %d was applied before it was issued",
			rs.Ctx, n.id, rs.Index, p.minIndex)
	}
}

// maybeCompact takes a snapshot of n's state machine as an application
// would, persists it, and drops the log entries it covers.
func (s *simulation) maybeCompact(n *simNode) {
	var snapIndex uint64
	if n.disk.snap != nil {
		snapIndex = n.disk.snap.Meta.Index
	}
	if s.cfg.compactEvery == 0 || n.smIndex < snapIndex+s.cfg.compactEvery {
		return
	}
	snap, err := n.rn.Compact(n.smIndex, encodeSimSnapshot(n.smIndex, n.smChain))
	if err != nil {
		s.failf("n%d compact at %d: %v", n.id, n.smIndex, err)
		return
	}
	drop := snap.Meta.Index - snapIndex
	if drop > uint64(len(n.disk.ents)) {
		s.failf("n%d compacted to %d past its durable log (%d entries after %d)", n.id, snap.Meta.Index, len(n.disk.ents), snapIndex)
		return
	}
	n.disk.snap, n.disk.snapChain = &snap, n.smChain
	n.disk.ents, n.disk.chain = n.disk.ents[drop:], n.disk.chain[drop:]
}

// retireRemoved shuts down for good the node a committed change removed,
// under random churn (scenarios keep removed nodes running).
// A removed node that never learns of its removal would otherwise campaign
// on, its log behind, and without PreVote or CheckQuorum depose leader
// after leader (Raft thesis, section 4.2.3).
func (s *simulation) retireRemoved(e Entry) {
	ce, err := UnmarshalConfChangeEntry(e.Data)
	if err != nil {
		s.failf("entry %d: %v", e.Index, err)
		return
	}
	if ce.Change.Type != RemoveNode {
		return
	}
	if n := s.nodes[ce.Change.NodeID-1]; !n.retired {
		n.retired = true // shut down at the end of the tick, not in the middle of its Ready
		s.logf("n%d retired: its removal committed at index %d", n.id, e.Index)
	}
}
