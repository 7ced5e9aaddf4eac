package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodingLayout(t *testing.T) {
	enc := encodeRecord(nil, Record{Type: 7, Index: 0x0102030405060708, Data: []byte("hi")})
	require.Len(t, enc, recordHeaderBytes+2)
	assert.Equal(t, uint32(2), binary.LittleEndian.Uint32(enc[0:]), "length")
	assert.Equal(t, byte(7), enc[8], "type")
	assert.Equal(t, uint64(0x0102030405060708), binary.LittleEndian.Uint64(enc[9:]), "index")
	assert.Equal(t, "hi", string(enc[17:]))
	// CRC32C (Castagnoli) of type+index+data, computed with a bitwise
	// reference implementation (reflected polynomial 0x82F63B78) that gives
	// the standard check value 0xE3069283 for "123456789".
	assert.Equal(t, uint32(0x5b90c6ee), binary.LittleEndian.Uint32(enc[4:]))
}

func TestDecodeRejects(t *testing.T) {
	good := encodeRecord(nil, Record{Type: 1, Index: 9, Data: []byte("data")})
	huge := binary.LittleEndian.AppendUint32(nil, MaxRecordBytes+1)
	huge = append(huge, make([]byte, recordHeaderBytes)...)
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	zeroType := encodeRecord(nil, Record{Type: 0, Index: 9})

	for name, tc := range map[string]struct {
		in   []byte
		want error
	}{
		"empty":           {nil, errShortRecord},
		"partial header":  {good[:recordHeaderBytes-1], errShortRecord},
		"partial data":    {good[:len(good)-1], errShortRecord},
		"length too big":  {huge, errRecordTooLarge},
		"max uint32 len":  {append([]byte{0xff, 0xff, 0xff, 0xff}, good[4:]...), errRecordTooLarge},
		"bad checksum":    {badCRC, errChecksum},
		"zero type":       {zeroType, errZeroType},
		"all zero header": {make([]byte, 64), errChecksum},
	} {
		t.Run(name, func(t *testing.T) {
			r, n, err := decodeRecord(tc.in)
			require.ErrorIs(t, err, tc.want)
			assert.Zero(t, n)
			assert.Equal(t, Record{}, r)
		})
	}
}

func TestDecodeStopsAtRecordEnd(t *testing.T) {
	a := Record{Type: 1, Index: 1, Data: []byte("first")}
	buf := encodeRecord(nil, a)
	buf = encodeRecord(buf, Record{Type: 2, Index: 2, Data: []byte("second")})
	r, n, err := decodeRecord(buf)
	require.NoError(t, err)
	assert.Equal(t, encodedSize(a), n)
	assert.Equal(t, a, r)
	assert.Equal(t, len(r.Data), cap(r.Data), "Data cannot be appended into the next record")
}

func TestDecodeNeverAllocates(t *testing.T) {
	inputs := [][]byte{
		encodeRecord(nil, Record{Type: 1, Index: 1, Data: make([]byte, 1000)}),
		append([]byte{0xff, 0xff, 0xff, 0x03}, make([]byte, 100)...), // claims 64 MiB - 1
		append([]byte{0xff, 0xff, 0xff, 0xff}, make([]byte, 100)...),
	}
	for _, in := range inputs {
		allocs := testing.AllocsPerRun(10, func() { decodeRecord(in) })
		assert.Zero(t, allocs)
	}
}

// FuzzDecodeRecord feeds arbitrary bytes to the decoder. It must never panic
// or allocate; whatever it accepts must be a well-formed record that
// re-encodes to exactly the bytes it consumed; whatever it rejects must be
// rejected with one of the known reasons.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte{})
	f.Add(encodeRecord(nil, Record{Type: 1, Index: 42, Data: []byte("entry")}))
	f.Add(encodeRecord(encodeRecord(nil, Record{Type: 2}), Record{Type: 3, Index: 1}))
	f.Add(make([]byte, recordHeaderBytes))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		var (
			r   Record
			n   int
			err error
		)
		if allocs := testing.AllocsPerRun(1, func() { r, n, err = decodeRecord(in) }); allocs != 0 {
			t.Fatalf("decodeRecord allocated %v times", allocs)
		}
		if err != nil {
			if n != 0 || !isDecodeError(err) {
				t.Fatalf("rejection with n=%d err=%v", n, err)
			}
			return
		}
		if n > len(in) || n != recordHeaderBytes+len(r.Data) || len(r.Data) > MaxRecordBytes || r.Type == 0 {
			t.Fatalf("accepted malformed record: n=%d len(in)=%d len(data)=%d type=%d", n, len(in), len(r.Data), r.Type)
		}
		if re := encodeRecord(nil, r); !bytes.Equal(re, in[:n]) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", in[:n], re)
		}
	})
}

func isDecodeError(err error) bool {
	for _, known := range []error{errShortRecord, errRecordTooLarge, errChecksum, errZeroType} {
		if errors.Is(err, known) {
			return true
		}
	}
	return false
}

// FuzzRecordRoundTrip checks that every valid record decodes to itself, with
// or without bytes following it.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add(uint8(1), uint64(0), []byte(nil), []byte(nil))
	f.Add(uint8(255), ^uint64(0), []byte("data"), []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, typ uint8, index uint64, data, trailer []byte) {
		want := Record{Type: typ, Index: index, Data: data}
		if validateRecord(want) != nil {
			return
		}
		enc := encodeRecord(nil, want)
		r, n, err := decodeRecord(append(enc, trailer...))
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if n != len(enc) || r.Type != typ || r.Index != index || !bytes.Equal(r.Data, data) {
			t.Fatalf("round trip: got %+v n=%d, want %+v n=%d", r, n, want, len(enc))
		}
	})
}
