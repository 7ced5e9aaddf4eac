package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"chaos/raft"
)

// A message is encoded as
//
//	u8 type, u8 flags,
//	uvarint From, To, Term, LogTerm, Index, Commit, RejectHint, Context,
//	uvarint len(Entries), then each entry:
//	    uvarint Term, uvarint Index, u8 Type, uvarint len(Data), Data
//	if flags has flagSnapshot:
//	    uvarint Meta.Index, uvarint Meta.Term,
//	    uvarint len(Voters), uvarint each voter,
//	    if flags has flagLearners: uvarint len(Learners), uvarint each learner,
//	    uvarint len(Data), Data
//
// A snapshot without learners sets no flagLearners and encodes as it did
// before learners existed.
//
// Empty and nil slices encode alike and decode as nil.
const (
	flagReject   = 1 << 0
	flagTransfer = 1 << 1
	flagSnapshot = 1 << 2
	flagLearners = 1 << 3
	knownFlags   = flagReject | flagTransfer | flagSnapshot | flagLearners
)

// Minimum encoded sizes, used to bound counts read from untrusted input.
const (
	minEntryBytes   = 4  // term, index, type, data length
	minMessageBytes = 11 // type, flags, eight scalars, entry count
)

// AppendMessage appends the binary encoding of m to buf and returns the
// extended buffer. Entries' and the snapshot's Data are copied into buf.
func AppendMessage(buf []byte, m raft.Message) []byte {
	var flags byte
	if m.Reject {
		flags |= flagReject
	}
	if m.Transfer {
		flags |= flagTransfer
	}
	if m.Snapshot != nil {
		flags |= flagSnapshot
		if len(m.Snapshot.Meta.ConfState.Learners) > 0 {
			flags |= flagLearners
		}
	}
	buf = append(buf, byte(m.Type), flags)
	for _, v := range [...]uint64{m.From, m.To, m.Term, m.LogTerm, m.Index, m.Commit, m.RejectHint, m.Context} {
		buf = binary.AppendUvarint(buf, v)
	}
	buf = binary.AppendUvarint(buf, uint64(len(m.Entries)))
	for i := range m.Entries {
		buf = appendEntry(buf, &m.Entries[i])
	}
	if m.Snapshot != nil {
		buf = appendSnapshot(buf, m.Snapshot)
	}
	return buf
}

func appendEntry(buf []byte, e *raft.Entry) []byte {
	buf = binary.AppendUvarint(buf, e.Term)
	buf = binary.AppendUvarint(buf, e.Index)
	buf = append(buf, byte(e.Type))
	buf = binary.AppendUvarint(buf, uint64(len(e.Data)))
	return append(buf, e.Data...)
}

func appendSnapshot(buf []byte, s *raft.Snapshot) []byte {
	buf = binary.AppendUvarint(buf, s.Meta.Index)
	buf = binary.AppendUvarint(buf, s.Meta.Term)
	buf = appendIDs(buf, s.Meta.ConfState.Voters)
	if len(s.Meta.ConfState.Learners) > 0 {
		buf = appendIDs(buf, s.Meta.ConfState.Learners)
	}
	buf = binary.AppendUvarint(buf, uint64(len(s.Data)))
	return append(buf, s.Data...)
}

func appendIDs(buf []byte, ids []uint64) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(ids)))
	for _, v := range ids {
		buf = binary.AppendUvarint(buf, v)
	}
	return buf
}

// MessageSize is len(AppendMessage(nil, m)), computed without encoding.
func MessageSize(m *raft.Message) int {
	n := 2
	for _, v := range [...]uint64{m.From, m.To, m.Term, m.LogTerm, m.Index, m.Commit, m.RejectHint, m.Context} {
		n += uvarintLen(v)
	}
	n += uvarintLen(uint64(len(m.Entries)))
	for i := range m.Entries {
		e := &m.Entries[i]
		n += uvarintLen(e.Term) + uvarintLen(e.Index) + 1 + uvarintLen(uint64(len(e.Data))) + len(e.Data)
	}
	if s := m.Snapshot; s != nil {
		n += uvarintLen(s.Meta.Index) + uvarintLen(s.Meta.Term)
		n += idsLen(s.Meta.ConfState.Voters)
		if len(s.Meta.ConfState.Learners) > 0 {
			n += idsLen(s.Meta.ConfState.Learners)
		}
		n += uvarintLen(uint64(len(s.Data))) + len(s.Data)
	}
	return n
}

// idsLen is len(appendIDs(nil, ids)).
func idsLen(ids []uint64) int {
	n := uvarintLen(uint64(len(ids)))
	for _, v := range ids {
		n += uvarintLen(v)
	}
	return n
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// DecodeMessage decodes exactly one message encoded by AppendMessage. It
// refuses truncated input, trailing bytes, unknown message types, unknown
// flag bits and counts larger than the input could hold; it never allocates
// more than a small multiple of len(b). The Data of the returned entries and
// snapshot alias b, so b must not be modified while the message is in use.
func DecodeMessage(b []byte) (raft.Message, error) {
	d := decoder{b: b}
	m := decodeMessage(&d)
	if err := d.finish(); err != nil {
		return raft.Message{}, fmt.Errorf("decode message: %w", err)
	}
	return m, nil
}

func decodeMessage(d *decoder) raft.Message {
	var m raft.Message
	m.Type = raft.MessageType(d.byte("type"))
	if d.err == nil && !m.Type.Valid() {
		d.fail("type", fmt.Errorf("%w: %d", ErrMessageType, m.Type))
	}
	flags := d.byte("flags")
	if d.err == nil && (flags&^knownFlags != 0 || flags&flagLearners != 0 && flags&flagSnapshot == 0) {
		d.fail("flags", fmt.Errorf("%w: %#x", ErrFlags, flags))
	}
	m.Reject = flags&flagReject != 0
	m.Transfer = flags&flagTransfer != 0
	for _, f := range [...]struct {
		name string
		p    *uint64
	}{{"from", &m.From}, {"to", &m.To}, {"term", &m.Term}, {"logterm", &m.LogTerm},
		{"index", &m.Index}, {"commit", &m.Commit}, {"rejecthint", &m.RejectHint}, {"context", &m.Context}} {
		*f.p = d.uvarint(f.name)
	}
	if n := d.count("entry count", minEntryBytes); n > 0 {
		m.Entries = make([]raft.Entry, n)
		for i := range m.Entries {
			decodeEntry(d, &m.Entries[i])
		}
	}
	if flags&flagSnapshot != 0 && d.err == nil {
		m.Snapshot = decodeSnapshot(d, flags&flagLearners != 0)
	}
	return m
}

func decodeEntry(d *decoder, e *raft.Entry) {
	e.Term = d.uvarint("entry term")
	e.Index = d.uvarint("entry index")
	e.Type = raft.EntryType(d.byte("entry type"))
	e.Data = d.bytes("entry data")
}

// decodeIDs reads a count and that many node IDs; none decodes as nil.
func decodeIDs(d *decoder, what string) []uint64 {
	n := d.count(what+" count", 1)
	if n == 0 {
		return nil
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = d.uvarint(what)
	}
	return ids
}

func decodeSnapshot(d *decoder, learners bool) *raft.Snapshot {
	s := &raft.Snapshot{}
	s.Meta.Index = d.uvarint("snapshot index")
	s.Meta.Term = d.uvarint("snapshot term")
	s.Meta.ConfState.Voters = decodeIDs(d, "voter")
	if learners {
		if s.Meta.ConfState.Learners = decodeIDs(d, "learner"); s.Meta.ConfState.Learners == nil && d.err == nil {
			d.fail("learner count", errors.New("flagLearners set on a snapshot without learners"))
		}
	}
	s.Data = d.bytes("snapshot data")
	return s
}
