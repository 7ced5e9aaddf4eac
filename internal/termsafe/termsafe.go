// Package termsafe escapes what chaos prints from data (keys, values, node
// names, errors a node or a remote shell sent, lines of a foreign log) so
// that none of it can act on a terminal: an ESC starting an ANSI sequence
// (colours, cursor moves, a window title, a hyperlink), a carriage return
// overwriting the line, a backspace. One function decides what is escaped
// (Escape); NewWriter applies it to everything written through it.
//
// Escaped are every control character except newline and tab (C0, DEL and
// the C1 range U+0080..U+009F, which some terminals take as 8-bit
// escapes), the Unicode bidirectional formatting characters (which reorder
// what the eye reads), and every byte that is not valid UTF-8. A byte or a
// character below U+0080 and an invalid byte are written as \xNN, any other
// character as \uNNNN: "\x1b[31m" prints as `\x1b[31m`.
package termsafe

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Escape returns s with every character a terminal could act on escaped
// (the package doc); s itself when it has none.
func Escape(s string) string {
	if clean([]byte(s)) {
		return s
	}
	return string(appendEscaped(nil, []byte(s)))
}

// NewWriter returns a writer that escapes what is written to it (as
// Escape) before passing it on to w. Each Write is escaped on its own, so
// a UTF-8 character split across two writes is escaped as invalid bytes;
// fmt's functions write whole strings.
func NewWriter(w io.Writer) io.Writer {
	if e, ok := w.(writer); ok {
		return e
	}
	return writer{w}
}

type writer struct{ w io.Writer }

// Write writes p escaped, and returns len(p) when all of it was written.
func (e writer) Write(p []byte) (int, error) {
	if clean(p) {
		return e.w.Write(p)
	}
	if _, err := e.w.Write(appendEscaped(nil, p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// clean reports whether p has nothing to escape.
func clean(p []byte) bool {
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if escaped(r, size) {
			return false
		}
		i += size
	}
	return true
}

// escaped reports whether the character r, size bytes long and at least
// U+0080, is escaped.
func escaped(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1: // an invalid byte
		return true
	case r < 0xa0: // C1
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidirectional formatting
	}
	return false
}

// appendEscaped appends p to dst with what clean objects to escaped.
func appendEscaped(dst, p []byte) []byte {
	for len(p) > 0 {
		c := p[0]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				dst = fmt.Appendf(dst, `\x%02x`, c)
			} else {
				dst = append(dst, c)
			}
			p = p[1:]
			continue
		}
		r, size := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && size == 1:
			dst = fmt.Appendf(dst, `\x%02x`, c)
		case escaped(r, size):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, p[:size]...)
		}
		p = p[size:]
	}
	return dst
}
