// Package jsonline scans the flat JSON lines chaos writes (history.jsonl,
// events.jsonl) without encoding/json: plain strings, integers and skipped
// values. Decoders built on it take a fast path for the lines their own
// writers produce and hand anything else to encoding/json, so they must
// accept only what encoding/json decodes the same way.
package jsonline

import (
	"math"
	"unicode/utf8"
)

// Scanner reads one JSON line byte by byte. Its methods move past what
// they accept and report false, having moved an unspecified amount, on
// anything else; a caller then gives up the fast path for the line.
type Scanner struct {
	b []byte
	i int
}

// New returns a Scanner at the start of line.
func New(line []byte) *Scanner { return &Scanner{b: line} }

// Done reports whether the whole line has been read.
func (s *Scanner) Done() bool { return s.i == len(s.b) }

// Pos is the offset of the next byte.
func (s *Scanner) Pos() int { return s.i }

// Slice is the line's bytes from start to the current position.
func (s *Scanner) Slice(start int) []byte { return s.b[start:s.i] }

// Peek is the next byte, 0 at the end.
func (s *Scanner) Peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// Byte moves past c if it comes next.
func (s *Scanner) Byte(c byte) bool {
	if s.Peek() == c {
		s.i++
		return true
	}
	return false
}

// Space moves past JSON whitespace.
func (s *Scanner) Space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// PlainString reads a JSON string that needs no unescaping: no backslash,
// no control character, valid UTF-8. It returns its contents.
func (s *Scanner) PlainString() ([]byte, bool) {
	if !s.Byte('"') {
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

// Int reads a JSON integer that fits an int64: -?(0|[1-9][0-9]*), not
// followed by a fraction or an exponent.
func (s *Scanner) Int() (int64, bool) {
	neg := s.Byte('-')
	n, ok := s.Uint()
	switch {
	case !ok:
		return 0, false
	case neg && n <= 1<<63:
		return -int64(n), true
	case !neg && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}

// SkipValue moves past one JSON value without checking it; the caller
// validates the span. It fails on an unterminated value.
func (s *Scanner) SkipValue() bool {
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
func (s *Scanner) skipString() bool {
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

// Uint reads a JSON integer that fits a uint64: 0|[1-9][0-9]*, not
// followed by a fraction or an exponent.
func (s *Scanner) Uint() (uint64, bool) {
	start := s.i
	var n uint64
	for ; s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9'; s.i++ {
		d := uint64(s.b[s.i] - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	digits := s.i - start
	switch {
	case digits == 0, digits > 1 && s.b[start] == '0':
		return 0, false
	case s.Peek() == '.' || s.Peek() == 'e' || s.Peek() == 'E':
		return 0, false
	}
	return n, true
}

// Object reads a line that holds one flat JSON object and nothing else but
// whitespace. For each member it calls member with the key (a plain
// string) and the Scanner at the value; member reads the value and
// returns the key's bit and whether it accepted the value. Object returns
// the bits seen; ok is false on bad syntax, a trailing comma, a value
// member refused, or a key seen twice (encoding/json keeps the last of
// repeated keys: a fast path leaves them to it).
func (s *Scanner) Object(member func(key []byte) (bit uint, ok bool)) (seen uint, ok bool) {
	s.Space()
	if !s.Byte('{') {
		return 0, false
	}
	s.Space()
	for !s.Byte('}') {
		key, ok := s.PlainString()
		if !ok {
			return 0, false
		}
		s.Space()
		if !s.Byte(':') {
			return 0, false
		}
		s.Space()
		bit, ok := member(key)
		if !ok || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		s.Space()
		if s.Byte(',') {
			s.Space()
			if s.Peek() == '}' {
				return 0, false // a trailing comma is not JSON
			}
		} else if s.Peek() != '}' {
			return 0, false
		}
	}
	s.Space()
	return seen, s.Done()
}
