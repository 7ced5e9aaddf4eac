package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"chaos/eventlog"
	"chaos/node/nodeapi"
	"chaos/raft"
)

// Errors of a membership change the leader refuses; nothing changed.
var (
	// errMemberConflict: the change does not fit the membership (409).
	errMemberConflict = errors.New("membership conflict")
	// errMemberUnknown: no member has the ID (404).
	errMemberUnknown = errors.New("no such member")
)

// confRequest is a membership change waiting for its entry to apply.
type confRequest struct {
	change raft.ConfChange
	// add is the member an AddLearner adds; the loop gives it its ID.
	add *nodeapi.Member
	p   *proposal // answered like a write
}

// proposeConf proposes a membership change if this node leads and the
// change fits; it is answered when its entry applies, like a write.
func (s *Server) proposeConf(ls *loopState, req *confRequest) {
	st := s.rn.Status()
	if st.Role != raft.Leader {
		req.p.done <- proposalResult{err: errNoLeader}
		return
	}
	if err := s.checkChange(st.Conf, req); err != nil {
		req.p.done <- proposalResult{err: err}
		return
	}
	if req.add != nil {
		req.add.ID = s.members.nextID()
		req.change.NodeID = req.add.ID
		req.change.Context, _ = json.Marshal(req.add) // a struct of strings and an integer
	}
	index, err := s.rn.ProposeConfChange(req.change)
	switch {
	case errors.Is(err, raft.ErrConfChangeInvalid), errors.Is(err, raft.ErrConfChangePending):
		req.p.done <- proposalResult{err: fmt.Errorf("%w: %v", errMemberConflict, err)}
		return
	case err != nil:
		req.p.done <- proposalResult{err: errNoLeader}
		return
	}
	// The new member enters the address book from the entry itself
	// (learnEntries, before the Ready's messages go out), like on every
	// other node: an entry that never commits leaves no trace here.
	ls.waiting[index] = pendingProposal{term: st.Term, p: req.p}
}

// checkChange refuses what raft cannot know is wrong (names, addresses)
// and what it would refuse less clearly (an unknown ID).
func (s *Server) checkChange(cs raft.ConfState, req *confRequest) error {
	if req.add == nil {
		if !slices.Contains(cs.Voters, req.change.NodeID) && !slices.Contains(cs.Learners, req.change.NodeID) {
			return fmt.Errorf("%w: no member has id %d", errMemberUnknown, req.change.NodeID)
		}
		return nil
	}
	for _, m := range s.members.view(cs) {
		switch {
		case m.Name == req.add.Name:
			return fmt.Errorf("%w: %s is a member already (id %d, %s); remove it first", errMemberConflict, m.Name, m.ID, m.Role)
		case m.Peer == req.add.Peer:
			return fmt.Errorf("%w: member %s (id %d) has peer address %s", errMemberConflict, m.Name, m.ID, m.Peer)
		}
	}
	return nil
}

// learnEntries adds the members that AddLearner entries name to the
// address book, as soon as the entries are in the log: raft sends to a
// member from the moment its entry is appended.
func (s *Server) learnEntries(ents []raft.Entry) {
	for _, e := range ents {
		if e.Type != raft.EntryConfChange {
			continue
		}
		ce, err := raft.UnmarshalConfChangeEntry(e.Data)
		if err != nil || ce.Change.Type != raft.AddLearner {
			continue // raft itself refuses a malformed entry
		}
		var m nodeapi.Member
		if err := json.Unmarshal(ce.Change.Context, &m); err != nil || m.ID != ce.Change.NodeID {
			s.log.Warn("membership entry without the member's addresses", "index", e.Index, "id", ce.Change.NodeID)
			continue
		}
		s.members.add(m)
	}
}

// peerAddrs returns the peer addresses of cs's members but this node; for
// a node in no configuration yet (one that joins, before the leader's log
// reaches it), of every member in the address book, so that the leader's
// messages are delivered and answered.
func (s *Server) peerAddrs(cs raft.ConfState) map[uint64]string {
	out := map[uint64]string{}
	if len(cs.Voters) == 0 {
		for _, m := range s.members.all() {
			if m.ID != s.id {
				out[m.ID] = m.Peer
			}
		}
		return out
	}
	for _, id := range append(slices.Clone(cs.Voters), cs.Learners...) {
		if m, ok := s.members.get(id); ok && id != s.id {
			out[id] = m.Peer
		}
	}
	return out
}

// syncPeers adds the members of raft's configuration in force to the
// transport's peers, before a Ready's messages go out. Peers leave only
// when their removal is applied (applyConf): until the change commits, a
// leader that removes itself still leads the others.
func (s *Server) syncPeers(ls *loopState) {
	cs := s.rn.Status().Conf
	if sameConf(cs, ls.synced) && len(cs.Voters) > 0 {
		return
	}
	ls.synced = cs
	for id, addr := range s.peerAddrs(cs) {
		if ls.peers[id] == addr {
			continue
		}
		if err := s.trans.AddPeer(id, addr); err != nil {
			s.log.Warn("adding a peer", "peer", id, "err", err)
			continue
		}
		ls.peers[id] = addr
	}
}

// applyConf applies a committed membership entry: the node's committed
// configuration, and its conf event.
func (s *Server) applyConf(ls *loopState, e raft.Entry) error {
	ce, err := raft.UnmarshalConfChangeEntry(e.Data)
	if err != nil {
		return fmt.Errorf("apply entry %d: %w", e.Index, err)
	}
	ls.conf = ce.State
	if id := ce.Change.NodeID; ce.Change.Type == raft.RemoveNode && id != s.id {
		s.trans.RemovePeer(id)
		delete(ls.peers, id)
	}
	change := fmt.Sprintf("%s %s", ce.Change.Type, s.name(ce.Change.NodeID))
	s.emitConf(e.Index, e.Term, change, ce.State)
	return nil
}

// emitConf writes a conf event.
func (s *Server) emitConf(index, term uint64, change string, cs raft.ConfState) {
	s.events.Emit(eventlog.Event{Event: eventlog.KindConf, Index: index, Term: term, Change: change,
		Voters: s.members.names(cs.Voters), Learners: s.members.names(cs.Learners)})
}

// sameConf reports whether a and b hold the same members in the same roles.
func sameConf(a, b raft.ConfState) bool {
	return slices.Equal(a.Voters, b.Voters) && slices.Equal(a.Learners, b.Learners)
}
