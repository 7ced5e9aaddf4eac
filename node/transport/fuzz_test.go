package transport

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

// fuzzMaxFrame keeps fuzzed frames small, so inputs explore structure
// rather than size.
const fuzzMaxFrame = 1 << 16

// FuzzDecodeMessage: any input either fails to decode or decodes to a
// message whose encoding decodes to the same message, is no longer than the
// input, and has the size MessageSize predicts. It must never panic.
func FuzzDecodeMessage(f *testing.F) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, typ := range allTypes() {
		f.Add(AppendMessage(nil, randomMessage(r, typ)))
	}
	f.Add(AppendMessage(nil, msgApp(3, 5)))
	f.Add([]byte{})
	f.Add([]byte{byte(raft.MsgApp), 0xff})
	f.Add(binary.AppendUvarint(header(0), 1<<62))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			return
		}
		enc := AppendMessage(nil, m)
		require.Len(t, enc, MessageSize(&m))
		require.LessOrEqual(t, len(enc), len(b), "the encoding is minimal")
		again, err := DecodeMessage(enc)
		require.NoError(t, err)
		require.Equal(t, m, again)
	})
}

// FuzzDecodeFrame reads the input twice: as a raw byte stream, and as a
// payload wrapped in a frame with a correct checksum (which random bytes
// would almost never have), so the batch decoder is reached too. Either
// read must fail or give a batch that rewrites into a frame reading back
// the same batch. It must never panic.
func FuzzDecodeFrame(f *testing.F) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{0, 1, 2, 5} {
		batch := make([]raft.Message, n)
		for i := range batch {
			batch[i] = randomMessage(r, allTypes()[r.IntN(len(allTypes()))])
		}
		var buf bytes.Buffer
		_, err := WriteFrame(&buf, batch, nil)
		require.NoError(f, err)
		f.Add(buf.Bytes())
		f.Add(buf.Bytes()[frameHeaderBytes:])
	}
	f.Add(binary.LittleEndian.AppendUint32(nil, 0xffffffff))
	f.Add([]byte{200, 1, 2, 3})
	f.Add(append([]byte{1, 0}, make([]byte, 11)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		requireFrameRoundTrip(t, b)
		if len(b) <= fuzzMaxFrame {
			requireFrameRoundTrip(t, frame(b))
		}
	})
}

func requireFrameRoundTrip(t *testing.T, stream []byte) {
	msgs, err := ReadFrame(bufio.NewReader(bytes.NewReader(stream)), fuzzMaxFrame)
	if err != nil {
		return
	}
	var buf bytes.Buffer
	_, err = WriteFrame(&buf, msgs, nil)
	require.NoError(t, err)
	again, err := ReadFrame(bufio.NewReader(&buf), fuzzMaxFrame)
	require.NoError(t, err)
	require.Equal(t, len(msgs), len(again))
	for i := range msgs {
		require.Equal(t, msgs[i], again[i])
	}
}
