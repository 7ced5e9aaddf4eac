package transport

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

func TestCodecRoundTripsEveryMessageType(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range allTypes() {
		for range 300 {
			m := randomMessage(r, typ)
			b := AppendMessage(nil, m)
			require.Len(t, b, MessageSize(&m), "MessageSize disagrees with AppendMessage for %v", m)
			got, err := DecodeMessage(b)
			require.NoError(t, err)
			require.Equal(t, m, got)
		}
	}
}

func TestAppendMessageAppendsToBuffer(t *testing.T) {
	m := msgApp(2, 10)
	prefix := []byte("prefix")
	b := AppendMessage(append([]byte(nil), prefix...), m)
	require.Equal(t, prefix, b[:len(prefix)])
	got, err := DecodeMessage(b[len(prefix):])
	require.NoError(t, err)
	require.Equal(t, m, got)
}

// TestEncodingIsStable pins the wire format: nodes of different builds must
// understand each other, so a change here must be deliberate.
func TestEncodingIsStable(t *testing.T) {
	m := raft.Message{Type: raft.MsgApp, From: 1, To: 2, Term: 3, LogTerm: 2, Index: 10, Commit: 9, Context: 300,
		Reject: true, Entries: []raft.Entry{{Term: 3, Index: 11, Type: raft.EntryNormal, Data: []byte("ab")}}}
	// type, flags (reject), from..context (300 = ac02), one entry: term, index, type, len, "ab"
	require.Equal(t, "0501"+"010203020a0900ac02"+"01"+"030b00026162",
		hex.EncodeToString(AppendMessage(nil, m)))

	snap := raft.Message{Type: raft.MsgSnap, From: 2, To: 1, Snapshot: &raft.Snapshot{
		Meta: raft.SnapshotMeta{Index: 5, Term: 1, ConfState: raft.ConfState{Voters: []uint64{1, 2}}}, Data: []byte{0xff}}}
	// type, flags (snapshot), scalars, no entries, index, term, two voters, one data byte
	require.Equal(t, "0904"+"0201000000000000"+"00"+"0501"+"020102"+"01ff", hex.EncodeToString(AppendMessage(nil, snap)))

	// With learners: flag 0x08 and the learners after the voters.
	snap.Snapshot.Meta.ConfState.Learners = []uint64{4}
	require.Equal(t, "090c"+"0201000000000000"+"00"+"0501"+"020102"+"0104"+"01ff", hex.EncodeToString(AppendMessage(nil, snap)))
}

func TestDecodeRejectsEveryTruncation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range allTypes() {
		for range 10 {
			b := AppendMessage(nil, randomMessage(r, typ))
			for n := range len(b) {
				_, err := DecodeMessage(b[:n])
				require.Error(t, err, "prefix of %d of %d bytes decoded", n, len(b))
			}
		}
	}
}

func TestDecodeRejectsTrailingBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range allTypes() {
		b := AppendMessage(nil, randomMessage(r, typ))
		_, err := DecodeMessage(append(b, 0))
		require.ErrorIs(t, err, ErrTrailing)
	}
}

func TestDecodeRejectsUnknownTypeAndFlags(t *testing.T) {
	valid := AppendMessage(nil, raft.Message{Type: raft.MsgHeartbeat})
	for _, typ := range []byte{0, byte(raft.MsgPropResp) + 1, 255} {
		b := append([]byte{typ}, valid[1:]...)
		_, err := DecodeMessage(b)
		require.ErrorIs(t, err, ErrMessageType, "type %d", typ)
	}
	for _, flags := range []byte{1 << 3, 1 << 4, 0x80} { // learners without a snapshot, unknown bits
		b := append([]byte(nil), valid...)
		b[1] = flags
		_, err := DecodeMessage(b)
		require.ErrorIs(t, err, ErrFlags, "flags %#x", flags)
	}
}

// header is a heartbeat's type, flags and eight zero scalars, after which a
// test appends the entry count and the rest.
func header(flags byte) []byte {
	return append([]byte{byte(raft.MsgHeartbeat), flags}, make([]byte, 8)...)
}

func TestDecodeRejectsCountsLargerThanInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"entry count 2^62":          binary.AppendUvarint(header(0), 1<<62),
		"entry count 3 in 11 bytes": append(binary.AppendUvarint(header(0), 3), make([]byte, 11)...),
		"entry data 2^40 bytes":     binary.AppendUvarint(append(binary.AppendUvarint(header(0), 1), 1, 1, 0), 1<<40),
		"voter count 2^50":          binary.AppendUvarint(append(binary.AppendUvarint(header(flagSnapshot), 0), 1, 1), 1<<50),
		"snapshot data 1 MiB in 3 bytes": append(binary.AppendUvarint(
			append(binary.AppendUvarint(header(flagSnapshot), 0), 1, 1, 0), 1<<20), 1, 2, 3),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeMessage(b)
			require.ErrorIs(t, err, ErrCount)
		})
	}
}

func TestDecodeRejectsOverlongVarint(t *testing.T) {
	b := append([]byte{byte(raft.MsgHeartbeat), 0}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
	_, err := DecodeMessage(b)
	require.ErrorIs(t, err, ErrVarint)
}

func TestDecodedDataAliasesInput(t *testing.T) {
	b := AppendMessage(nil, msgApp(1, 4))
	m, err := DecodeMessage(b)
	require.NoError(t, err)
	b[len(b)-1] = 'y'
	require.Equal(t, "xxxy", string(m.Entries[0].Data), "Data is documented to alias the input")
}
