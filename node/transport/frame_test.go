package transport

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

func TestFramesRoundTripInSequence(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var batches [][]raft.Message
	var stream bytes.Buffer
	var scratch []byte
	for _, n := range []int{0, 1, 17, 3, 0, 64} {
		batch := make([]raft.Message, n)
		for i := range batch {
			batch[i] = randomMessage(r, allTypes()[r.IntN(len(allTypes()))])
		}
		var err error
		scratch, err = WriteFrame(&stream, batch, scratch)
		require.NoError(t, err)
		batches = append(batches, batch)
	}
	br := bufio.NewReader(&stream)
	for _, want := range batches {
		got, err := ReadFrame(br, 0)
		require.NoError(t, err)
		require.Len(t, got, len(want))
		for i := range want {
			require.Equal(t, want[i], got[i])
		}
	}
	_, err := ReadFrame(br, 0)
	require.ErrorIs(t, err, io.EOF, "a stream ending between frames ends cleanly")
}

// frame builds a frame around payload with a correct checksum.
func frame(payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// batchPayload is a payload of one message with the given encoding.
func batchPayload(msg []byte) []byte {
	return append(binary.AppendUvarint([]byte{1}, uint64(len(msg))), msg...)
}

func TestReadFrameRejectsBadFrames(t *testing.T) {
	good := frame(batchPayload(AppendMessage(nil, msgApp(2, 5))))
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 1
	unknownType := AppendMessage(nil, raft.Message{Type: raft.MsgHeartbeat})
	unknownType[0] = 99
	for name, tc := range map[string]struct {
		in   []byte
		want error
	}{
		"bad checksum":        {badCRC, ErrChecksum},
		"length above max":    {binary.LittleEndian.AppendUint32(nil, 1025), ErrFrameTooLarge},
		"length 2^32-1":       {binary.LittleEndian.AppendUint32(make([]byte, 0, 8), 0xffffffff), ErrFrameTooLarge},
		"truncated header":    {good[:5], io.ErrUnexpectedEOF},
		"truncated payload":   {good[:len(good)-1], io.ErrUnexpectedEOF},
		"empty payload":       {frame(nil), ErrTruncated},
		"trailing payload":    {frame(append(batchPayload(AppendMessage(nil, msgApp(1, 1))), 0)), ErrTrailing},
		"count beyond bytes":  {frame([]byte{200, 1, 2, 3}), ErrCount},
		"message size beyond": {frame([]byte{1, 100, 1, 2, 3}), ErrCount},
		"empty message":       {frame(append([]byte{1, 0}, make([]byte, 11)...)), ErrTruncated},
		"unknown type":        {frame(batchPayload(unknownType)), ErrMessageType},
	} {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			if len(in) == 4 { // a bare length: add some checksum
				in = append(in, 0, 0, 0, 0)
			}
			_, err := ReadFrame(bufio.NewReader(bytes.NewReader(in)), 1024)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// TestReadFrameMemoryFollowsBytesReceived: a header claiming the largest
// frame, followed by nothing, must not allocate the claimed size.
func TestReadFrameMemoryFollowsBytesReceived(t *testing.T) {
	in := binary.LittleEndian.AppendUint32(nil, MaxFrameBytes)
	in = append(in, 0, 0, 0, 0, 1, 2, 3)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFrame(bufio.NewReader(bytes.NewReader(in)), 0)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(MaxFrameBytes/16))
}

func TestWriteFrameReusesScratchWithoutAllocating(t *testing.T) {
	batch := []raft.Message{msgApp(64, 100), msgApp(1, 10)}
	scratch, err := WriteFrame(io.Discard, batch, nil)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(20, func() {
		scratch, err = WriteFrame(io.Discard, batch, scratch)
	})
	require.NoError(t, err)
	require.Zero(t, allocs)
}

func TestWriteFrameRefusesOversizeAndWritesNothing(t *testing.T) {
	huge := raft.Message{Type: raft.MsgSnap, From: 1, To: 2, Snapshot: &raft.Snapshot{Data: make([]byte, MaxFrameBytes)}}
	var out bytes.Buffer
	_, err := WriteFrame(&out, []raft.Message{huge}, nil)
	require.ErrorIs(t, err, ErrFrameTooLarge)
	require.Zero(t, out.Len())
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestWriteFrameReportsWriteError(t *testing.T) {
	_, err := WriteFrame(failingWriter{io.ErrClosedPipe}, heartbeats(1, 2, 0, 3), nil)
	require.ErrorIs(t, err, io.ErrClosedPipe)
}

func TestSplitBatchFillsFramesUpToTheBound(t *testing.T) {
	m := msgApp(1, 100)
	per := uvarintLen(uint64(MessageSize(&m))) + MessageSize(&m)
	batch := []raft.Message{m, m, m, m, m}
	require.Equal(t, 5, splitBatch(batch, 1+5*per))
	require.Equal(t, 4, splitBatch(batch, 5*per))
	require.Equal(t, 1, splitBatch(batch, 1+per))
	require.Equal(t, 0, splitBatch(batch, per), "a message that cannot fit alone")
	require.Equal(t, 0, splitBatch(nil, 10))
	for n := 1; n <= len(batch); n++ {
		var buf bytes.Buffer
		_, err := WriteFrame(&buf, batch[:splitBatch(batch, 1+n*per)], nil)
		require.NoError(t, err)
		require.LessOrEqual(t, buf.Len()-frameHeaderBytes, 1+n*per)
	}
}
