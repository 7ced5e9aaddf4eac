package history

import (
	"encoding/json"
	"unicode/utf8"
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
	strings map[string]string
}

// maxInterned bounds the intern table; beyond it strings are not shared.
const maxInterned = 1 << 16

func newDecoder() *decoder { return &decoder{strings: make(map[string]string)} }

// decode decodes one line (see decodeOp for the checks).
func (d *decoder) decode(line []byte) (Op, error) {
	if op, ok := d.fast(line); ok {
		return op, nil
	}
	op, err := decodeOp(line)
	if err == nil {
		op.F, op.Key, op.Node, op.Error = d.intern(op.F), d.intern(op.Key), d.intern(op.Node), d.intern(op.Error)
	}
	return op, err
}

func (d *decoder) intern(s string) string {
	if t, ok := d.strings[s]; ok {
		return t
	}
	if len(d.strings) < maxInterned && len(s) <= 64 {
		d.strings[s] = s
	}
	return s
}

func (d *decoder) internBytes(b []byte) string {
	if t, ok := d.strings[string(b)]; ok {
		return t
	}
	return d.intern(string(b))
}

// Bits of the fields the fast path has seen.
const (
	seenIndex = 1 << iota
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
	s := scanner{b: line}
	s.space()
	if !s.byte('{') {
		return Op{}, false
	}
	s.space()
	var seen int
	for !s.byte('}') {
		key, ok := s.plainString()
		if !ok {
			return Op{}, false
		}
		s.space()
		if !s.byte(':') {
			return Op{}, false
		}
		s.space()
		bit, ok := d.field(&s, &op, key)
		if !ok || seen&bit != 0 {
			return Op{}, false
		}
		seen |= bit
		s.space()
		if s.byte(',') {
			s.space()
			if s.peek() == '}' {
				return Op{}, false // a trailing comma is not JSON
			}
		} else if s.peek() != '}' {
			return Op{}, false
		}
	}
	s.space()
	return op, s.i == len(s.b) && seen&seenRequired == seenRequired
}

// field decodes the value of key into op and returns the key's bit.
func (d *decoder) field(s *scanner, op *Op, key []byte) (int, bool) {
	switch string(key) {
	case "index":
		n, ok := s.int()
		op.Index = n
		return seenIndex, ok
	case "time":
		n, ok := s.int()
		op.Time = n
		return seenTime, ok
	case "process":
		if s.peek() == '"' {
			str, ok := s.plainString()
			op.Process = NemesisProcess
			return seenProcess, ok && string(str) == "nemesis"
		}
		n, ok := s.int()
		op.Process = Process(n)
		return seenProcess, ok && n >= 0
	case "type":
		str, ok := s.plainString()
		t, err := ParseType(string(str))
		op.Type = t
		return seenType, ok && err == nil
	case "value":
		start := s.i
		if !s.skipValue() || !json.Valid(s.b[start:s.i]) {
			return seenValue, false
		}
		op.Value = append(json.RawMessage(nil), s.b[start:s.i]...)
		return seenValue, true
	}
	var dst *string
	var bit int
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
	str, ok := s.plainString()
	*dst = d.internBytes(str)
	return bit, ok
}

// scanner reads a line byte by byte.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) byte(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// plainString reads a JSON string that needs no unescaping: no backslash,
// no control character, valid UTF-8. It returns its contents.
func (s *scanner) plainString() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			str := s.b[start:s.i]
			s.i++
			return str, ascii || utf8.Valid(str)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// int reads a JSON integer that fits an int64: -?(0|[1-9][0-9]*), not
// followed by a fraction or an exponent.
func (s *scanner) int() (int64, bool) {
	neg := s.byte('-')
	start := s.i
	var n uint64
	for ; s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9'; s.i++ {
		if n > (1<<63)/10 {
			return 0, false
		}
		n = n*10 + uint64(s.b[s.i]-'0')
	}
	digits := s.i - start
	switch {
	case digits == 0, digits > 1 && s.b[start] == '0':
		return 0, false
	case s.peek() == '.' || s.peek() == 'e' || s.peek() == 'E':
		return 0, false
	case neg && n <= 1<<63:
		return -int64(n), true
	case !neg && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}

// skipValue moves past one JSON value without checking it; the caller
// validates the span. It fails on an unterminated value.
func (s *scanner) skipValue() bool {
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if !s.skipString() {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return true // the end of the enclosing object: a scalar ended here
			}
			depth--
			if depth == 0 {
				s.i++
				return true
			}
		case ',':
			if depth == 0 {
				return true
			}
		case ' ', '\t', '\r', '\n':
			if depth == 0 {
				return true
			}
		}
		s.i++
	}
	return depth == 0
}

// skipString moves past a JSON string, escapes included.
func (s *scanner) skipString() bool {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return true
		}
	}
	return false
}
