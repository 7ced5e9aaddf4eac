package described

import "strings"

// shellScanner reads a shell command line as dash or bash does, far enough
// to tell where each placeholder lies (see unsafePlaceholder). It errs on
// the side of refusing: where it cannot tell what the shell would read, it
// reads a region that refuses placeholders as running on.
type shellScanner struct {
	text string
	// bash reads bash's $'...', $[...] and ((...)); without it, $' is a $
	// and then '...', and (( two subshells, as in dash.
	bash bool
	// starts names the placeholder whose { is at each offset.
	starts map[int]string
	// stack holds the contexts open at i, the outermost first; it is never
	// empty, its bottom being the command line itself ('T').
	stack []shellFrame
	// pending are the here-documents opened on the current line, whose
	// bodies begin at its end, in order.
	pending []heredoc
	i       int
}

// shellFrame is a context of the command line.
type shellFrame struct {
	// kind is 'T' the command line, 'S' '...', 'D' "...", 'A' bash's
	// $'...', 'C' $(...), 'M' $((...)), 'N' bash's ((...)), 'K' bash's
	// $[...], 'P' ${...}.
	kind byte
	// depth counts the ( (in 'C', 'M', 'N') or [ (in 'K') opened within
	// the frame and not yet closed.
	depth int
	// arith marks a 'P' with a subscript or substring: arithmetic in bash.
	arith bool
	// from is where a 'C''s command begins, just after its $(.
	from int
	// cases counts the case commands open in a 'C', whose patterns' ) do
	// not close it.
	cases int
}

// heredoc is a here-document operator whose body is still to come.
type heredoc struct {
	word   string // the delimiter as written: 'EOF'
	delim  string // the line that ends the body: EOF
	quoted bool   // any part of the word is quoted: the body is not expanded
	tabs   bool   // <<-: leading tabs are stripped from the body's lines
}

func newShellScanner(text string, bash bool) *shellScanner {
	starts := map[int]string{}
	for _, m := range placeholder.FindAllStringSubmatchIndex(text, -1) {
		starts[m[0]] = text[m[2]:m[3]]
	}
	return &shellScanner{text: text, bash: bash, starts: starts, stack: []shellFrame{{kind: 'T'}}}
}

// run scans the whole text and returns the first unsafe placeholder, or
// nil.
func (s *shellScanner) run() *shellHazard {
	for s.i < len(s.text) {
		if name, ok := s.starts[s.i]; ok {
			if h := s.judge(name); h != nil {
				return s.found(s.i, h)
			}
			s.i += len(name) + 2
			continue
		}
		var h *shellHazard
		switch s.top().kind {
		case 'S':
			if s.text[s.i] == '\'' {
				s.pop()
			}
			s.i++
		case 'A':
			h = s.ansi()
		case 'D':
			h = s.double()
		default:
			h = s.unquoted()
		}
		if h != nil {
			return h
		}
	}
	return nil
}

func (s *shellScanner) top() *shellFrame { return &s.stack[len(s.stack)-1] }
func (s *shellScanner) push(kind byte)   { s.stack = append(s.stack, shellFrame{kind: kind}) }
func (s *shellScanner) pop()             { s.stack = s.stack[:len(s.stack)-1] }

// found completes h with the offset of its placeholder.
func (s *shellScanner) found(at int, h *shellHazard) *shellHazard {
	h.at = at
	return h
}

// at reports whether the text at offset i begins with p.
func (s *shellScanner) at(i int, p string) bool {
	return strings.HasPrefix(s.text[min(i, len(s.text)):], p)
}

// judge returns the hazard of a placeholder in the current context, or nil
// when its quoted value is one plain word there. Arithmetic anywhere
// around it is a hazard; quotes are, up to the innermost $(...), which
// begins unquoted again.
func (s *shellScanner) judge(name string) *shellHazard {
	for _, f := range s.stack {
		switch {
		case f.kind == 'M':
			return arithmeticHazard(name, "$((...)) arithmetic")
		case f.kind == 'N':
			return arithmeticHazard(name, "((...)) arithmetic")
		case f.kind == 'K':
			return arithmeticHazard(name, "$[...] arithmetic")
		case f.kind == 'P' && f.arith:
			return arithmeticHazard(name, "the subscript or substring of a ${...}, which is arithmetic")
		}
	}
	switch s.quote() {
	case 'S':
		return quotedHazard(name, "'", "'")
	case 'D':
		return quotedHazard(name, `"`, `"`)
	case 'A':
		return quotedHazard(name, "$'", "'")
	}
	return nil
}

// quote is the kind of the innermost quotes around i ('S', 'D', 'A'), or
// 0 when it is unquoted.
func (s *shellScanner) quote() byte {
	for k := len(s.stack) - 1; k >= 0; k-- {
		switch s.stack[k].kind {
		case 'S', 'D', 'A':
			return s.stack[k].kind
		case 'T', 'C':
			return 0
		}
	}
	return 0
}

// escaped steps over a backslash and the character it escapes; a
// placeholder right after it is a hazard.
func (s *shellScanner) escaped() *shellHazard {
	if name, ok := s.starts[s.i+1]; ok {
		if h := s.judge(name); h != nil {
			return s.found(s.i+1, h)
		}
		return s.found(s.i+1, backslashHazard(name))
	}
	s.i += 2
	return nil
}

// ansi reads one character within bash's $'...', where \ escapes.
func (s *shellScanner) ansi() *shellHazard {
	switch s.text[s.i] {
	case '\\':
		return s.escaped()
	case '\'':
		s.pop()
	}
	s.i++
	return nil
}

// double reads one character within "...".
func (s *shellScanner) double() *shellHazard {
	switch s.text[s.i] {
	case '\\':
		return s.escaped()
	case '$':
		return s.dollar()
	case '`':
		return s.backquotes()
	case '"':
		s.pop()
	}
	s.i++
	return nil
}

// unquoted reads one token outside quotes: on the command line, in a
// $(...), in arithmetic, or in a ${...}.
func (s *shellScanner) unquoted() *shellHazard {
	top, c := s.top(), s.text[s.i]
	command := top.kind == 'T' || top.kind == 'C'
	switch {
	case c == '\\':
		return s.escaped()
	case c == '$':
		return s.dollar()
	case c == '`':
		return s.backquotes()
	case c == '"':
		s.push('D')
	case c == '\'' && !(top.kind == 'P' && !s.bash && s.quote() == 'D'):
		// dash reads a ' as a plain character in a ${...} within "...".
		s.push('S')
	case c == '}' && top.kind == 'P':
		s.pop()
	case c == '#' && command && (s.i == 0 || isShellBlank(s.text[s.i-1])):
		return s.comment()
	case c == '\n' && command && len(s.pending) > 0:
		return s.bodies()
	case command && s.at(s.i, "<<<"):
		s.i += 3 // a here-string: its word is a word like any other
		return nil
	case command && s.at(s.i, "<<"):
		return s.heredocOperator()
	case command && s.bash && s.at(s.i, "(("):
		s.push('N')
		s.i += 2
		return nil
	case top.kind == 'C' && s.keyword("case"):
		top.cases++
	case top.kind == 'C' && s.keyword("esac"):
		top.cases = max(top.cases-1, 0)
	default:
		s.bracket(c)
	}
	s.i++
	return nil
}

// keyword reports whether the reserved word w is at i, where a command
// of the innermost $(...) begins: at its start, or after one of ; & | ( or
// a newline. (After then, do or else it is not told: a case there is not
// counted, and its patterns' ) close the $(...) early.)
func (s *shellScanner) keyword(w string) bool {
	end := s.i + len(w)
	if !s.at(s.i, w) || (end < len(s.text) && !isShellBlank(s.text[end])) {
		return false
	}
	k := s.i - 1
	for k >= s.top().from && (s.text[k] == ' ' || s.text[k] == '\t') {
		k--
	}
	return k < s.top().from || strings.IndexByte(";&|(\n", s.text[k]) >= 0
}

// bracket follows the ( ) and [ ] that close the frames counting them. A
// ) at depth 0 in $((...)) that the next character does not pair is read
// as part of it: the arithmetic runs on. A ) at depth 0 in a $(...) with a
// case open ends a pattern.
func (s *shellScanner) bracket(c byte) {
	top := s.top()
	switch {
	case top.kind == 'K' && c == '[', top.kind != 'K' && c == '(':
		top.depth++
	case top.kind == 'K' && c == ']' && top.depth == 0:
		s.pop()
	case top.kind == 'C' && c == ')' && top.depth == 0 && top.cases == 0:
		s.pop()
	case (top.kind == 'M' || top.kind == 'N') && c == ')' && top.depth == 0:
		if s.at(s.i+1, ")") {
			s.pop()
			s.i++
		}
	case top.kind == 'K' && c == ']', top.kind != 'K' && c == ')':
		top.depth = max(top.depth-1, 0)
	}
}

// dollar reads what a $ begins: an expansion, or a plain $.
func (s *shellScanner) dollar() *shellHazard {
	if name, ok := s.starts[s.i+1]; ok {
		if h := s.judge(name); h != nil {
			return s.found(s.i+1, h)
		}
		return s.found(s.i+1, dollarHazard(name))
	}
	inDouble := s.top().kind == 'D'
	switch {
	case s.at(s.i, "$$"):
		s.i += 2
	case s.at(s.i, "$(("):
		s.push('M')
		s.i += 3
	case s.at(s.i, "$("):
		s.stack = append(s.stack, shellFrame{kind: 'C', from: s.i + 2})
		s.i += 2
	case s.bash && !inDouble && s.at(s.i, "$'"):
		s.push('A')
		s.i += 2
	case s.bash && s.at(s.i, "$["):
		s.push('K')
		s.i += 2
	case s.at(s.i, "${"):
		return s.parameter()
	default:
		s.i++
	}
	return nil
}

// parameter reads the start of a ${...}: its name, and whether a
// subscript or substring follows (arithmetic in bash). dash refuses both
// ("bad substitution"), so they are read so in either shell.
func (s *shellScanner) parameter() *shellHazard {
	j := s.i + 2
	if j+1 < len(s.text) && (s.text[j] == '#' || s.text[j] == '!') && s.text[j+1] != '}' {
		j++ // ${#name}, bash's ${!name}
	}
	if name, ok := s.starts[j]; ok {
		return s.found(j, paramNameHazard(name))
	}
	switch {
	case j < len(s.text) && isNameByte(s.text[j]) && !isDigit(s.text[j]):
		for j < len(s.text) && isNameByte(s.text[j]) {
			j++
		}
	case j < len(s.text) && isDigit(s.text[j]):
		for j < len(s.text) && isDigit(s.text[j]) {
			j++
		}
	case j < len(s.text) && strings.IndexByte("@*#?-$!", s.text[j]) >= 0:
		j++
	}
	arith := s.at(j, "[") || (s.at(j, ":") && j+1 < len(s.text) && strings.IndexByte("-=?+", s.text[j+1]) < 0)
	s.stack = append(s.stack, shellFrame{kind: 'P', arith: arith})
	s.i = j
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isNameByte(c byte) bool {
	return c == '_' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// backquotes reads a `...` whole, as the shell does before it reads what
// is inside: up to the first ` that no \ escapes. Any placeholder within
// is a hazard.
func (s *shellScanner) backquotes() *shellHazard {
	for j := s.i + 1; j < len(s.text); j++ {
		if name, ok := s.starts[j]; ok {
			return s.found(j, backquoteHazard(name))
		}
		switch s.text[j] {
		case '\\':
			if name, ok := s.starts[j+1]; ok {
				return s.found(j+1, backquoteHazard(name))
			}
			j++
		case '`':
			s.i = j + 1
			return nil
		}
	}
	s.i = len(s.text)
	return nil
}

// comment reads a comment, up to the end of its line. Any placeholder
// within is a hazard.
func (s *shellScanner) comment() *shellHazard {
	for ; s.i < len(s.text) && s.text[s.i] != '\n'; s.i++ {
		if name, ok := s.starts[s.i]; ok {
			return s.found(s.i, commentHazard(name))
		}
	}
	return nil
}

// heredocOperator reads << or <<- and its delimiter word, whose body
// begins after the end of the line.
func (s *shellScanner) heredocOperator() *shellHazard {
	j := s.i + 2
	tabs := s.at(j, "-")
	if tabs {
		j++
	}
	for j < len(s.text) && (s.text[j] == ' ' || s.text[j] == '\t') {
		j++
	}
	h, end, name := readHeredocWord(s.text, s.starts, j)
	if name != "" {
		return s.found(end, heredocWordHazard(name))
	}
	h.tabs = tabs
	s.pending = append(s.pending, h)
	s.i = end
	return nil
}

// readHeredocWord reads the delimiter word of a here-document that begins
// at text[j:], up to an unquoted blank or operator, and removes its quotes.
// A placeholder within stops it: its name, and end at its {.
func readHeredocWord(text string, starts map[int]string, j int) (h heredoc, end int, name string) {
	var delim strings.Builder
	q := byte(0)
	for end = j; end < len(text) && (q != 0 || !isShellBlank(text[end])); end++ {
		c := text[end]
		if name, ok := starts[end]; ok {
			return h, end, name
		}
		switch {
		case q == 0 && (c == '\'' || c == '"'):
			q, h.quoted = c, true
		case q != 0 && c == q:
			q = 0
		case q != '\'' && c == '\\' && end+1 < len(text):
			h.quoted = true
			end++
			delim.WriteByte(text[end])
		default:
			delim.WriteByte(c)
		}
	}
	h.word, h.delim = text[j:end], delim.String()
	return h, end, ""
}

// bodies reads the bodies of the pending here-documents, which begin after
// the newline at i, each up to the line that is its delimiter (or the end
// of the text). Any placeholder within is a hazard.
func (s *shellScanner) bodies() *shellHazard {
	j := s.i + 1
	for _, h := range s.pending {
		for j < len(s.text) {
			end := strings.IndexByte(s.text[j:], '\n')
			if end < 0 {
				end = len(s.text) - j
			}
			line, next := s.text[j:j+end], j+end+1
			if h.tabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delim {
				j = next
				break
			}
			for k := j; k < j+end; k++ {
				if name, ok := s.starts[k]; ok {
					return s.found(k, heredocHazard(name, h))
				}
			}
			j = next
		}
	}
	s.pending = nil
	s.i = min(j, len(s.text))
	return nil
}
