package secret

import "strings"

// Line is Args for a command line written as one string for a POSIX shell
// (a replay command): words are split as sh splits them (single quotes,
// double quotes, backslashes), each secret value is replaced by
// '<redacted>' quoted for the shell, and every other byte of line is kept.
// An unterminated quote runs to the end of line, as one word.
func Line(line string) string {
	words := shellWords(line)
	var b strings.Builder
	last := 0
	replace := func(w word, with string) {
		b.WriteString(line[last:w.start])
		b.WriteString("'" + with + "'") // with holds no single quote
		last = w.end
	}
	for i := 0; i < len(words); i++ {
		name, _, hasValue := flagWord(words[i].value)
		switch {
		case !IsFlag(name):
		case hasValue:
			replace(words[i], "--"+name+"="+Redacted)
		case i+1 < len(words):
			replace(words[i+1], Redacted)
			i++
		}
	}
	b.WriteString(line[last:])
	return b.String()
}

// word is one shell word of a line: its bytes line[start:end] and its
// value once the quotes are removed.
type word struct {
	start, end int
	value      string
}

// shellWords splits line into words as a POSIX shell does, without
// expansions.
func shellWords(line string) []word {
	var words []word
	i := 0
	for {
		for i < len(line) && strings.IndexByte(" \t\n", line[i]) >= 0 {
			i++
		}
		if i == len(line) {
			return words
		}
		w := word{start: i}
		w.value, i = scanWord(line, i)
		w.end = i
		words = append(words, w)
	}
}

// scanWord reads the word starting at line[i] and returns its unquoted
// value and the index just past it.
func scanWord(line string, i int) (string, int) {
	var v strings.Builder
	for i < len(line) && strings.IndexByte(" \t\n", line[i]) < 0 {
		switch c := line[i]; c {
		case '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				end = len(line) - i - 1
			}
			v.WriteString(line[i+1 : i+1+end])
			i += end + 2
		case '"':
			i = scanDoubleQuoted(line, i+1, &v)
		case '\\':
			if i+1 < len(line) {
				i++
			}
			v.WriteByte(line[i])
			i++
		default:
			v.WriteByte(c)
			i++
		}
	}
	return v.String(), min(i, len(line))
}

// scanDoubleQuoted reads a double-quoted string from line[i] (just past
// the opening quote) into v and returns the index past the closing quote.
// A backslash quotes only $ ` " \ and a newline there.
func scanDoubleQuoted(line string, i int, v *strings.Builder) int {
	for i < len(line) {
		c := line[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0:
			v.WriteByte(line[i+1])
			i += 2
		default:
			v.WriteByte(c)
			i++
		}
	}
	return i
}
