package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"chaos/raft"
)

// MaxFrameBytes is the largest frame payload either side accepts. A batch
// that would exceed the bound is split by the sender; a single message that
// exceeds it (a snapshot too large) cannot be sent.
const MaxFrameBytes = 64 << 20

// frameHeaderBytes is the size of [u32 length][u32 crc32c].
const frameHeaderBytes = 8

// readChunkBytes is the first read size for a payload; the buffer doubles as
// data actually arrives, so a forged length cannot allocate up front.
const readChunkBytes = 64 << 10

// Frame errors. Decoding errors of the payload wrap the errors of DecodeMessage.
var (
	// ErrFrameTooLarge means a frame's length exceeds the bound.
	ErrFrameTooLarge = errors.New("frame too large")
	// ErrChecksum means a frame's payload does not match its CRC.
	ErrChecksum = errors.New("frame checksum mismatch")
)

// castagnoli is the CRC-32C table; it is never modified after package init.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteFrame encodes msgs as one frame into scratch (reusing its capacity)
// and writes it to w with a single Write call. It returns the buffer for
// reuse by the next call. If the payload would exceed MaxFrameBytes nothing
// is written and the error wraps ErrFrameTooLarge. An empty msgs writes a
// keepalive frame.
func WriteFrame(w io.Writer, msgs []raft.Message, scratch []byte) ([]byte, error) {
	buf := append(scratch[:0], make([]byte, frameHeaderBytes)...)
	buf = binary.AppendUvarint(buf, uint64(len(msgs)))
	for i := range msgs {
		buf = binary.AppendUvarint(buf, uint64(MessageSize(&msgs[i])))
		buf = AppendMessage(buf, msgs[i])
	}
	payload := buf[frameHeaderBytes:]
	if len(payload) > MaxFrameBytes {
		return buf, fmt.Errorf("write frame of %d messages: %w: %d bytes, limit %d",
			len(msgs), ErrFrameTooLarge, len(payload), MaxFrameBytes)
	}
	binary.LittleEndian.PutUint32(buf[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	if _, err := w.Write(buf); err != nil {
		return buf, fmt.Errorf("write frame of %d messages: %w", len(msgs), err)
	}
	return buf, nil
}

// splitBatch returns how many messages from the front of msgs fit in one
// frame whose payload is at most max bytes: at least one unless msgs[0]
// alone is too large, in which case it returns 0.
func splitBatch(msgs []raft.Message, max int) int {
	size := uvarintLen(uint64(len(msgs))) // bounds the count prefix of any prefix of msgs
	for i := range msgs {
		s := MessageSize(&msgs[i])
		size += uvarintLen(uint64(s)) + s
		if size > max {
			return i
		}
	}
	return len(msgs)
}

// ReadFrame reads one frame from r and decodes its batch. max bounds the
// payload length (values <= 0 or above MaxFrameBytes mean MaxFrameBytes).
// It returns io.EOF only when r ends cleanly between frames, and
// io.ErrUnexpectedEOF when it ends inside one. The payload buffer is read in
// growing chunks, so memory follows the bytes actually received rather than
// the length claimed. Entry and snapshot Data alias a buffer owned by the
// returned messages alone.
func ReadFrame(r *bufio.Reader, max int) ([]raft.Message, error) {
	if max <= 0 || max > MaxFrameBytes {
		max = MaxFrameBytes
	}
	hdr, err := r.Peek(frameHeaderBytes)
	if err != nil {
		if err == io.EOF && len(hdr) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read frame header: %w", err)
	}
	n := binary.LittleEndian.Uint32(hdr[0:4])
	sum := binary.LittleEndian.Uint32(hdr[4:8])
	if _, err := r.Discard(frameHeaderBytes); err != nil {
		return nil, fmt.Errorf("read frame header: %w", err)
	}
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("read frame: %w: %d bytes, limit %d", ErrFrameTooLarge, n, max)
	}
	payload, err := readPayload(r, int(n))
	if err != nil {
		return nil, fmt.Errorf("read frame payload of %d bytes: %w", n, err)
	}
	if got := crc32.Checksum(payload, castagnoli); got != sum {
		return nil, fmt.Errorf("read frame: %w: header %#08x, payload %#08x", ErrChecksum, sum, got)
	}
	msgs, err := decodeBatch(payload)
	if err != nil {
		return nil, fmt.Errorf("read frame: %w", err)
	}
	return msgs, nil
}

// readPayload reads exactly n bytes, growing its buffer only as bytes arrive.
func readPayload(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, readChunkBytes))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		got, err := io.ReadFull(r, buf[len(buf):min(n, cap(buf))])
		buf = buf[:len(buf)+got]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// decodeBatch decodes a frame payload: a count, then size-prefixed messages.
func decodeBatch(payload []byte) ([]raft.Message, error) {
	d := decoder{b: payload}
	n := d.count("message count", minMessageBytes+1)
	if d.err != nil {
		return nil, fmt.Errorf("decode batch: %w", d.err)
	}
	msgs := make([]raft.Message, 0, n)
	for i := 0; i < n; i++ {
		body := d.bytes("message")
		if d.err != nil {
			return nil, fmt.Errorf("decode batch: message %d of %d: %w", i, n, d.err)
		}
		m, err := DecodeMessage(body)
		if err != nil {
			return nil, fmt.Errorf("decode batch: message %d of %d: %w", i, n, err)
		}
		msgs = append(msgs, m)
	}
	if err := d.finish(); err != nil {
		return nil, fmt.Errorf("decode batch: %w", err)
	}
	return msgs, nil
}
