package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Decoding errors. Every decoding failure wraps one of these.
var (
	// ErrTruncated means the input ended inside a field.
	ErrTruncated = errors.New("truncated input")
	// ErrTrailing means bytes were left over after a complete message.
	ErrTrailing = errors.New("trailing bytes")
	// ErrVarint means a uvarint was longer than 64 bits.
	ErrVarint = errors.New("uvarint overflows 64 bits")
	// ErrCount means a count or length claims more items than the remaining
	// input could possibly hold.
	ErrCount = errors.New("count exceeds remaining input")
	// ErrMessageType means the message type is not one raft defines.
	ErrMessageType = errors.New("unknown message type")
	// ErrFlags means the flags byte has bits set that no version defines.
	ErrFlags = errors.New("unknown flag bits")
)

// decoder reads fields from b in order. The first failure sticks in err and
// turns every later read into a no-op returning zero values, so a decoding
// function can read all its fields and check err once.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(field string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("%s at offset %d: %w", field, d.off, err)
	}
}

func (d *decoder) remaining() int { return len(d.b) - d.off }

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	if d.off < len(d.b) && d.b[d.off] < 0x80 { // one byte: most fields
		d.off++
		return uint64(d.b[d.off-1])
	}
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail(field, ErrTruncated)
		return 0
	case n < 0:
		d.fail(field, ErrVarint)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) byte(field string) byte {
	if d.err != nil {
		return 0
	}
	if d.remaining() < 1 {
		d.fail(field, ErrTruncated)
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

// count reads a uvarint count of items that each take at least minBytes of
// the remaining input, and refuses counts the input cannot hold. This is what
// keeps a forged count from allocating more than a small multiple of the
// bytes actually received.
func (d *decoder) count(field string, minBytes int) int {
	n := d.uvarint(field)
	rem := d.remaining()
	// n <= rem first, so that n*minBytes cannot overflow.
	if d.err == nil && (n > uint64(rem) || int(n)*minBytes > rem) {
		d.fail(field, fmt.Errorf("%w: %d items of at least %d bytes in %d bytes", ErrCount, n, minBytes, rem))
		return 0
	}
	return int(n)
}

// bytes reads a uvarint length and that many bytes. The result aliases the
// input; it is nil when the length is zero.
func (d *decoder) bytes(field string) []byte {
	n := d.count(field, 1)
	if d.err != nil || n == 0 {
		return nil
	}
	b := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

// finish reports the sticky error, or ErrTrailing if input is left over.
func (d *decoder) finish() error {
	if d.err == nil && d.remaining() != 0 {
		d.fail("end", fmt.Errorf("%w: %d", ErrTrailing, d.remaining()))
	}
	return d.err
}
