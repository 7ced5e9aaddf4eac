package control

import "strings"

// ShellQuote returns s as a single word of a POSIX shell command line: s as
// it is when it holds only characters no shell treats specially, otherwise s
// in single quotes, each single quote in s closing the quotes, escaped and
// reopening them; the empty string is two single quotes:
//
//	ShellQuote("it's") == `'it'\''s'`
//
// s must not contain a NUL byte: no shell word can hold one.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if isShellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isShellSafe reports whether s has only letters, digits and -_./:,+=@%,
// which no POSIX shell expands or splits on, in any position.
func isShellSafe(s string) bool {
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.ContainsRune("-_./:,+=@%", c):
		default:
			return false
		}
	}
	return true
}
