package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// ConfChangeType is what a membership change does.
type ConfChangeType uint8

const (
	// AddLearner adds a node that receives the log but neither votes nor
	// counts toward a quorum, so that it can catch up before it does.
	AddLearner ConfChangeType = iota + 1
	// PromoteVoter makes a learner a voter.
	PromoteVoter
	// RemoveNode removes a voter or a learner.
	RemoveNode
)

func (t ConfChangeType) String() string {
	switch t {
	case AddLearner:
		return "add-learner"
	case PromoteVoter:
		return "promote-voter"
	case RemoveNode:
		return "remove-node"
	}
	return fmt.Sprintf("ConfChangeType(%d)", uint8(t))
}

// ConfChange is one single-server membership change.
type ConfChange struct {
	Type   ConfChangeType
	NodeID uint64
	// Context is the application's, carried in the entry and not read by
	// raft: what the members need to know of the node (its addresses).
	Context []byte
}

func (cc ConfChange) String() string { return fmt.Sprintf("%s %d", cc.Type, cc.NodeID) }

// Errors of a membership change the leader refuses; nothing is appended.
var (
	// ErrConfChangeInvalid: the change does not fit the configuration (a
	// node added twice, a removed or promoted node that is not a member or
	// not a learner, the last voter removed).
	ErrConfChangeInvalid = errors.New("raft: invalid membership change")
	// ErrConfChangePending: an earlier change is not committed yet, or the
	// leader has not committed an entry of its own term (see doc.go).
	ErrConfChangePending = errors.New("raft: a membership change is in progress")
)

// apply returns the configuration that cc makes of cs, or why it cannot.
// cs is not modified.
func (cs ConfState) apply(cc ConfChange) (ConfState, error) {
	voter, learner := slices.Contains(cs.Voters, cc.NodeID), slices.Contains(cs.Learners, cc.NodeID)
	next := ConfState{Voters: slices.Clone(cs.Voters), Learners: slices.Clone(cs.Learners)}
	switch {
	case cc.NodeID == None:
		return cs, fmt.Errorf("%w: node ID 0 is reserved", ErrConfChangeInvalid)
	case cc.Type == AddLearner && (voter || learner):
		return cs, fmt.Errorf("%w: node %d is already a member", ErrConfChangeInvalid, cc.NodeID)
	case cc.Type == AddLearner:
		next.Learners = append(next.Learners, cc.NodeID)
	case cc.Type == PromoteVoter && !learner:
		return cs, fmt.Errorf("%w: node %d is not a learner", ErrConfChangeInvalid, cc.NodeID)
	case cc.Type == PromoteVoter:
		next.Learners = slices.DeleteFunc(next.Learners, func(id uint64) bool { return id == cc.NodeID })
		next.Voters = append(next.Voters, cc.NodeID)
	case cc.Type == RemoveNode && voter && len(cs.Voters) == 1:
		return cs, fmt.Errorf("%w: node %d is the last voter", ErrConfChangeInvalid, cc.NodeID)
	case cc.Type == RemoveNode && (voter || learner):
		drop := func(id uint64) bool { return id == cc.NodeID }
		next.Voters, next.Learners = slices.DeleteFunc(next.Voters, drop), slices.DeleteFunc(next.Learners, drop)
	case cc.Type == RemoveNode:
		return cs, fmt.Errorf("%w: node %d is not a member", ErrConfChangeInvalid, cc.NodeID)
	default:
		return cs, fmt.Errorf("%w: unknown change type %d", ErrConfChangeInvalid, cc.Type)
	}
	slices.Sort(next.Voters)
	slices.Sort(next.Learners)
	return next.clone(), nil
}

// isVoter and isLearner report cs's membership of id; cs is sorted.
func (cs ConfState) isVoter(id uint64) bool {
	_, ok := slices.BinarySearch(cs.Voters, id)
	return ok
}

func (cs ConfState) isLearner(id uint64) bool {
	_, ok := slices.BinarySearch(cs.Learners, id)
	return ok
}

// members returns the voters and the learners.
func (cs ConfState) members() []uint64 { return append(slices.Clone(cs.Voters), cs.Learners...) }

// clone returns a copy that shares nothing with cs; an empty list is nil.
func (cs ConfState) clone() ConfState {
	c := func(ids []uint64) []uint64 {
		if len(ids) == 0 {
			return nil
		}
		return slices.Clone(ids)
	}
	return ConfState{Voters: c(cs.Voters), Learners: c(cs.Learners)}
}

// ConfChangeEntry is the data of an EntryConfChange: the change (with its
// context) and the whole configuration it makes, so that a node that never saw the
// configurations before it (one that joins with an empty log) knows the
// membership from the entry alone.
type ConfChangeEntry struct {
	Change ConfChange
	State  ConfState
}

// Marshal encodes e as an entry's Data.
func (e ConfChangeEntry) Marshal() []byte {
	b := []byte{byte(e.Change.Type)}
	b = binary.AppendUvarint(b, e.Change.NodeID)
	for _, ids := range [][]uint64{e.State.Voters, e.State.Learners} {
		b = binary.AppendUvarint(b, uint64(len(ids)))
		for _, id := range ids {
			b = binary.AppendUvarint(b, id)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(e.Change.Context)))
	return append(b, e.Change.Context...)
}

// UnmarshalConfChangeEntry decodes an EntryConfChange's Data.
func UnmarshalConfChangeEntry(b []byte) (ConfChangeEntry, error) {
	bad := fmt.Errorf("raft: malformed membership change entry (%d bytes)", len(b))
	if len(b) == 0 {
		return ConfChangeEntry{}, bad
	}
	e := ConfChangeEntry{Change: ConfChange{Type: ConfChangeType(b[0])}}
	b = b[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	var ok bool
	if e.Change.NodeID, ok = next(); !ok {
		return ConfChangeEntry{}, bad
	}
	for _, ids := range []*[]uint64{&e.State.Voters, &e.State.Learners} {
		n, ok := next()
		if !ok || n > uint64(len(b)) {
			return ConfChangeEntry{}, bad
		}
		*ids = make([]uint64, n)
		for i := range *ids {
			if (*ids)[i], ok = next(); !ok {
				return ConfChangeEntry{}, bad
			}
		}
	}
	n, ok := next()
	if !ok || n != uint64(len(b)) {
		return ConfChangeEntry{}, bad
	}
	if n > 0 {
		e.Change.Context = slices.Clone(b)
	}
	e.State = e.State.clone()
	return e, nil
}

// confLog is the configuration a node uses: the newest in its log, whether
// committed or not (Raft thesis, section 4.1), else the one its snapshot
// records, else the one it started with. It remembers the indexes of the
// membership entries in the log after the snapshot, so that a truncated
// log goes back to the configuration before the entries it lost.
type confLog struct {
	base    ConfState // as of the snapshot, or the initial configuration
	changes []confAt  // membership entries after the snapshot, by index
}

type confAt struct {
	index uint64
	state ConfState
}

// current is the configuration in force.
func (c *confLog) current() ConfState {
	if n := len(c.changes); n > 0 {
		return c.changes[n-1].state
	}
	return c.base
}

// pendingIndex is the index of the newest membership entry, 0 if none
// follows the snapshot.
func (c *confLog) pendingIndex() uint64 {
	if n := len(c.changes); n > 0 {
		return c.changes[n-1].index
	}
	return 0
}

// at is the configuration as of index i (i at or after the snapshot).
func (c *confLog) at(i uint64) ConfState {
	s := c.base
	for _, ch := range c.changes {
		if ch.index > i {
			break
		}
		s = ch.state
	}
	return s
}

// truncate forgets the membership entries at index i and after.
func (c *confLog) truncate(i uint64) {
	for len(c.changes) > 0 && c.changes[len(c.changes)-1].index >= i {
		c.changes = c.changes[:len(c.changes)-1]
	}
}

// appended takes note of the membership entries among ents, which the
// log now holds after everything earlier. A malformed one is a bug of the
// node that wrote it and panics, as a corrupt log would.
func (c *confLog) appended(ents []Entry) {
	for _, e := range ents {
		if e.Type != EntryConfChange {
			continue
		}
		ce, err := UnmarshalConfChangeEntry(e.Data)
		if err != nil {
			panic(fmt.Sprintf("raft: entry %d: %v", e.Index, err))
		}
		c.changes = append(c.changes, confAt{index: e.Index, state: ce.State})
	}
}

// compacted moves the base to the configuration as of snapshot index i.
func (c *confLog) compacted(i uint64) {
	c.base = c.at(i)
	n := 0
	for n < len(c.changes) && c.changes[n].index <= i {
		n++
	}
	c.changes = c.changes[n:]
}

// restored replaces everything with a snapshot's configuration.
func (c *confLog) restored(s ConfState) {
	c.base, c.changes = s.clone(), nil
}
