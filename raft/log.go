package raft

import "fmt"

// raftLog is the in-memory copy of a node's log: the newest snapshot and the
// entries after it. The application holds the durable copy; stable tracks how
// much of this one it has confirmed durable.
//
// Invariants:
//
//	snapIndex <= applied <= committed <= lastIndex()
//	snapIndex <= stable <= lastIndex()
//	entries[i].Index == snapIndex+1+i
//
// Entries are never modified in place: a truncation copies, so slices handed
// out in messages and Ready stay valid.
type raftLog struct {
	snapIndex uint64
	snapTerm  uint64
	// snapshot is the newest snapshot, kept to send to followers that fell
	// behind the compacted prefix. nil until the first compaction or restore.
	snapshot *Snapshot
	// pendingSnapshot is a snapshot received from the leader that the
	// application has not yet been handed in a Ready.
	pendingSnapshot *Snapshot
	entries         []Entry

	committed uint64
	applied   uint64
	// stable is the last index the application has made durable.
	stable uint64
}

func (l *raftLog) firstIndex() uint64 { return l.snapIndex + 1 }

func (l *raftLog) lastIndex() uint64 { return l.snapIndex + uint64(len(l.entries)) }

func (l *raftLog) lastTerm() uint64 {
	t, _ := l.term(l.lastIndex())
	return t
}

// term returns the term of the entry at i: ErrCompacted below the snapshot,
// ErrUnavailable past the end.
func (l *raftLog) term(i uint64) (uint64, error) {
	switch {
	case i == l.snapIndex:
		return l.snapTerm, nil
	case i < l.snapIndex:
		return 0, ErrCompacted
	case i > l.lastIndex():
		return 0, ErrUnavailable
	}
	return l.entries[i-l.snapIndex-1].Term, nil
}

func (l *raftLog) matchTerm(i, term uint64) bool {
	t, err := l.term(i)
	return err == nil && t == term
}

// isUpToDate reports whether a log ending at (index, term) is at least as
// up to date as this one (Raft paper, section 5.4.1).
func (l *raftLog) isUpToDate(index, term uint64) bool {
	lt := l.lastTerm()
	return term > lt || (term == lt && index >= l.lastIndex())
}

// slice returns entries [lo, hi). Callers ensure firstIndex <= lo <= hi <= lastIndex+1.
func (l *raftLog) slice(lo, hi uint64) []Entry {
	return l.entries[lo-l.snapIndex-1 : hi-l.snapIndex-1]
}

// entriesFrom returns entries from lo on, at most maxBytes of data but at
// least one entry. ErrCompacted when lo is covered by the snapshot.
func (l *raftLog) entriesFrom(lo, maxBytes uint64) ([]Entry, error) {
	if lo <= l.snapIndex {
		return nil, ErrCompacted
	}
	if lo > l.lastIndex() {
		return nil, nil
	}
	ents := l.slice(lo, l.lastIndex()+1)
	var size uint64
	for i := range ents {
		size += uint64(len(ents[i].Data))
		if i > 0 && size > maxBytes {
			return ents[:i], nil
		}
	}
	return ents, nil
}

// append adds entries at the end of the log after the leader assigned them
// indexes. It returns the new last index.
func (l *raftLog) append(ents ...Entry) uint64 {
	l.entries = append(l.entries, ents...)
	return l.lastIndex()
}

// findConflict returns the index of the first entry of ents whose term
// differs from this log's entry at that index, the index of the first entry
// past this log's end, or 0 when every entry is already present.
func (l *raftLog) findConflict(ents []Entry) uint64 {
	for _, e := range ents {
		if !l.matchTerm(e.Index, e.Term) {
			return e.Index
		}
	}
	return 0
}

// maybeAppend applies an append message: if the entry at index has term
// logTerm, it truncates any conflicting suffix, appends ents, advances the
// commit index to min(commit, last new index) and returns that last index.
func (l *raftLog) maybeAppend(index, logTerm, commit uint64, ents []Entry) (uint64, bool) {
	if !l.matchTerm(index, logTerm) {
		return 0, false
	}
	lastNew := index + uint64(len(ents))
	if ci := l.findConflict(ents); ci != 0 {
		if ci <= l.committed {
			panic(fmt.Sprintf("raft: entry %d conflicts with committed entry (committed=%d)", ci, l.committed))
		}
		l.truncateAndAppend(ents[ci-index-1:])
	}
	l.commitTo(min(commit, lastNew))
	return lastNew, true
}

// truncateAndAppend replaces the log from ents[0].Index on. It copies, so
// slices handed out earlier keep their contents.
func (l *raftLog) truncateAndAppend(ents []Entry) {
	after := ents[0].Index - 1
	switch {
	case after == l.lastIndex():
		l.entries = append(l.entries, ents...)
	case after < l.snapIndex:
		panic(fmt.Sprintf("raft: truncation at %d below snapshot %d", after, l.snapIndex))
	default:
		kept := make([]Entry, 0, int(after-l.snapIndex)+len(ents))
		kept = append(kept, l.entries[:after-l.snapIndex]...)
		l.entries = append(kept, ents...)
		l.stable = min(l.stable, after)
	}
}

// conflictHint returns the hint a follower sends when the entry at index does
// not match: the first index of its own term there and that term, or its
// last index + 1 and 0 when its log is shorter.
func (l *raftLog) conflictHint(index uint64) (hint, term uint64) {
	if index > l.lastIndex() {
		return l.lastIndex() + 1, 0
	}
	t, err := l.term(index)
	if err != nil {
		return l.snapIndex + 1, 0
	}
	first := index
	for first > l.firstIndex() {
		if pt, _ := l.term(first - 1); pt != t {
			break
		}
		first--
	}
	return first, t
}

// lastIndexOfTerm returns the largest index <= upTo holding an entry of term
// t, scanning back over newer terms only. ok is false when the log has no
// entry of term t there (or it was compacted).
func (l *raftLog) lastIndexOfTerm(t, upTo uint64) (uint64, bool) {
	for i := min(upTo, l.lastIndex()); i > l.snapIndex; i-- {
		it, _ := l.term(i)
		if it == t {
			return i, true
		}
		if it < t {
			return 0, false
		}
	}
	return 0, false
}

func (l *raftLog) commitTo(c uint64) {
	c = min(c, l.lastIndex())
	if c > l.committed {
		l.committed = c
	}
}

// unstable returns the entries the application has not yet made durable.
func (l *raftLog) unstable() []Entry {
	if l.stable >= l.lastIndex() {
		return nil
	}
	return l.slice(l.stable+1, l.lastIndex()+1)
}

// nextCommitted returns committed entries not yet handed to the application.
func (l *raftLog) nextCommitted() []Entry {
	if l.applied >= l.committed {
		return nil
	}
	return l.slice(l.applied+1, l.committed+1)
}

// restore replaces the whole log with a snapshot received from the leader.
func (l *raftLog) restore(s *Snapshot) {
	l.snapIndex, l.snapTerm = s.Meta.Index, s.Meta.Term
	l.snapshot, l.pendingSnapshot = s, s
	l.entries = nil
	l.committed, l.applied, l.stable = s.Meta.Index, s.Meta.Index, s.Meta.Index
}

// compact drops the entries covered by a snapshot the application took.
func (l *raftLog) compact(s *Snapshot) {
	i := s.Meta.Index
	l.entries = l.entries[i-l.snapIndex:]
	l.snapIndex, l.snapTerm, l.snapshot = i, s.Meta.Term, s
}
