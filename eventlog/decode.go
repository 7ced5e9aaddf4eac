package eventlog

import (
	"encoding/json"

	"chaos/internal/jsonline"
)

// decoder turns event lines into Events. Lines of the shape Writer writes
// (a flat object, known keys in lower case, plain strings, unsigned
// integers) take a fast path several times quicker than encoding/json;
// any other line goes through encoding/json, which also makes the error
// messages. The fast path must agree with encoding/json on every line it
// accepts (FuzzParseLineAgrees checks it).
//
// It interns the short strings that repeat across a log (node names,
// kinds, roles, leaders): a long log then holds a handful of copies.
type decoder struct {
	strings jsonline.Interner
}

// maxInterned bounds the intern table; beyond it strings are not shared.
const maxInterned = 1 << 12

func newDecoder() *decoder { return &decoder{strings: *jsonline.NewInterner(maxInterned)} }

// decode decodes one line into an Event, without checking the fields
// every event has (ParseLine does).
func (d *decoder) decode(line []byte) (Event, error) {
	if ev, ok := d.fast(line); ok {
		return ev, nil
	}
	var ev Event
	err := json.Unmarshal(line, &ev)
	return ev, err
}

// Bits of the keys the fast path has seen.
const (
	seenTime uint = 1 << iota
	seenNode
	seenEvent
	seenRole
	seenLeader
	seenFor
	seenHash
	seenTerm
	seenIndex
	seenEntries
	seenBugs
	seenChange
	seenVoters
	seenLearners
	seenTruncated
	seenLost
)

// fast decodes a line of Writer's shape; ok is false on anything else.
func (d *decoder) fast(line []byte) (ev Event, ok bool) {
	s := jsonline.New(line)
	_, ok = s.Object(func(key []byte) (uint, bool) { return d.field(s, &ev, key) })
	return ev, ok
}

// field decodes the value of key into ev and returns the key's bit.
func (d *decoder) field(s *jsonline.Scanner, ev *Event, key []byte) (uint, bool) {
	switch string(key) {
	case "time":
		start := s.Pos()
		if _, ok := s.PlainString(); !ok {
			return seenTime, false
		}
		// What encoding/json itself calls, on the quoted string.
		return seenTime, ev.Time.UnmarshalJSON(s.Slice(start)) == nil
	case "term":
		n, ok := s.Uint()
		ev.Term = n
		return seenTerm, ok
	case "index":
		n, ok := s.Uint()
		ev.Index = n
		return seenIndex, ok
	case "entries":
		n, ok := s.Int()
		ev.Entries = int(n)
		return seenEntries, ok && int64(int(n)) == n
	case "truncated":
		n, ok := s.Int()
		ev.Truncated = n
		return seenTruncated, ok
	case "hash":
		str, ok := s.PlainString()
		ev.Hash = string(str)
		return seenHash, ok
	case "bugs":
		str, ok := s.PlainString()
		ev.Bugs = d.strings.Bytes(str)
		return seenBugs, ok
	}
	var dst *string
	var bit uint
	switch string(key) {
	case "node":
		dst, bit = &ev.Node, seenNode
	case "leader":
		dst, bit = &ev.Leader, seenLeader
	case "change":
		dst, bit = &ev.Change, seenChange
	case "voters":
		dst, bit = &ev.Voters, seenVoters
	case "learners":
		dst, bit = &ev.Learners, seenLearners
	case "for":
		dst, bit = &ev.For, seenFor
	case "lost":
		dst, bit = &ev.Lost, seenLost
	case "event":
		str, ok := s.PlainString()
		ev.Event = Kind(d.strings.Bytes(str))
		return seenEvent, ok
	case "role":
		str, ok := s.PlainString()
		ev.Role = Role(d.strings.Bytes(str))
		return seenRole, ok
	default:
		return 0, false
	}
	str, ok := s.PlainString()
	*dst = d.strings.Bytes(str)
	return bit, ok
}
