package history

import (
	"encoding/json"

	"chaos/internal/jsonline"
)

// decoder turns lines into ops. Lines the recorder writes (a flat object,
// known keys, plain strings and integers) take a fast path that is several
// times quicker than encoding/json; any line it is unsure about goes
// through encoding/json instead, which also produces the error messages.
// The fast path must therefore agree with encoding/json on every line it
// accepts (FuzzDecodeAgrees checks it).
//
// It also interns short strings (f, keys, node names, errors), which repeat
// across a history: a million-op history then holds a few hundred distinct
// strings instead of millions of copies.
type decoder struct {
	strings *jsonline.Interner
}

// maxInterned bounds the intern table; beyond it strings are not shared.
const maxInterned = 1 << 16

func newDecoder() *decoder { return &decoder{strings: jsonline.NewInterner(maxInterned)} }

// decode decodes one line (see decodeOp for the checks).
func (d *decoder) decode(line []byte) (Op, error) {
	if op, ok := d.fast(line); ok {
		return op, nil
	}
	op, err := decodeOp(line)
	if err == nil {
		op.F, op.Key, op.Node, op.Error = d.strings.String(op.F), d.strings.String(op.Key), d.strings.String(op.Node), d.strings.String(op.Error)
	}
	return op, err
}

// Bits of the fields the fast path has seen.
const (
	seenIndex uint = 1 << iota
	seenTime
	seenProcess
	seenType
	seenF
	seenKey
	seenValue
	seenNode
	seenError
	seenRequired = seenIndex | seenTime | seenProcess | seenType | seenF
)

// fast decodes a line of the shape the recorder writes. ok is false when the
// line has anything else: escapes, unknown or repeated keys, numbers that
// are not plain int64s, a missing field, invalid JSON.
func (d *decoder) fast(line []byte) (op Op, ok bool) {
	s := jsonline.New(line)
	seen, ok := s.Object(func(key []byte) (uint, bool) { return d.field(s, &op, key) })
	return op, ok && seen&seenRequired == seenRequired
}

// field decodes the value of key into op and returns the key's bit.
func (d *decoder) field(s *jsonline.Scanner, op *Op, key []byte) (uint, bool) {
	switch string(key) {
	case "index":
		n, ok := s.Int()
		op.Index = n
		return seenIndex, ok
	case "time":
		n, ok := s.Int()
		op.Time = n
		return seenTime, ok
	case "process":
		if s.Peek() == '"' {
			str, ok := s.PlainString()
			op.Process = NemesisProcess
			return seenProcess, ok && string(str) == "nemesis"
		}
		n, ok := s.Int()
		op.Process = Process(n)
		return seenProcess, ok && n >= 0
	case "type":
		str, ok := s.PlainString()
		t, err := ParseType(string(str))
		op.Type = t
		return seenType, ok && err == nil
	case "value":
		start := s.Pos()
		if !s.SkipValue() || !json.Valid(s.Slice(start)) {
			return seenValue, false
		}
		op.Value = append(json.RawMessage(nil), s.Slice(start)...)
		return seenValue, true
	}
	var dst *string
	var bit uint
	switch string(key) {
	case "f":
		dst, bit = &op.F, seenF
	case "key":
		dst, bit = &op.Key, seenKey
	case "node":
		dst, bit = &op.Node, seenNode
	case "error":
		dst, bit = &op.Error, seenError
	default:
		return 0, false
	}
	str, ok := s.PlainString()
	*dst = d.strings.Bytes(str)
	return bit, ok
}
