// Package kv is chaos-node's replicated state machine: a map of string keys
// to string values with put, compare-and-set and delete, applied in log
// order, with per-client sessions so a retried write is applied once.
package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
)

// Op is the kind of a write command.
type Op uint8

const (
	OpPut Op = iota + 1
	OpCAS
	OpDelete
)

func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpCAS:
		return "cas"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Limits on what a command may carry; the HTTP API answers 413 past them.
const (
	MaxKeyBytes   = 1 << 10
	MaxValueBytes = 1 << 20
)

// Command is one write. Client and Seq identify it for deduplication: a
// command whose Seq is not above its client's last applied Seq is not applied
// again, and its first result is returned. Client 0 means no deduplication.
type Command struct {
	Op     Op
	Client uint64
	Seq    uint64
	Key    string
	Value  string // put: the value; cas: the new value
	From   string // cas: the expected current value
}

var errShort = errors.New("kv: command truncated")

// Encode appends the binary form of c to b.
func (c Command) Encode(b []byte) []byte {
	b = append(b, byte(c.Op))
	b = binary.AppendUvarint(b, c.Client)
	b = binary.AppendUvarint(b, c.Seq)
	for _, s := range []string{c.Key, c.Value, c.From} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// DecodeCommand parses a command encoded by Encode.
func DecodeCommand(b []byte) (Command, error) {
	if len(b) == 0 {
		return Command{}, errShort
	}
	c := Command{Op: Op(b[0])}
	if c.Op < OpPut || c.Op > OpDelete {
		return Command{}, fmt.Errorf("kv: unknown op %d", b[0])
	}
	b = b[1:]
	var err error
	if c.Client, b, err = uvarint(b); err != nil {
		return Command{}, err
	}
	if c.Seq, b, err = uvarint(b); err != nil {
		return Command{}, err
	}
	for _, dst := range []*string{&c.Key, &c.Value, &c.From} {
		var n uint64
		if n, b, err = uvarint(b); err != nil {
			return Command{}, err
		}
		if n > uint64(len(b)) {
			return Command{}, errShort
		}
		*dst, b = string(b[:n]), b[n:]
	}
	if len(b) != 0 {
		return Command{}, fmt.Errorf("kv: %d trailing bytes after command", len(b))
	}
	return c, nil
}

func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errShort
	}
	return v, b[n:], nil
}

// Hash is the hash of an encoded command that the event log records with
// each apply, so logs of different nodes can be compared index by index.
func Hash(data []byte) string {
	h := fnv.New64a()
	h.Write(data)
	return fmt.Sprintf("%016x", h.Sum64())
}
