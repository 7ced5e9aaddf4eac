package described

import "fmt"

// A shell template's placeholders are each expanded to one shell word,
// quoted as needed (Template.ExpandShell). A placeholder the author put
// inside quotes of their own is quoted twice: "{data_dir}" expands to
// "'/var/lib/my db'" and the command sees the quotes as part of the path;
// an address or a directory with a quote in it ends the author's quotes.
// Load refuses such a template (quotedPlaceholder finds the first).

// shellContext is where a shell command line's scanner is.
type shellContext struct {
	kind   byte // 'T' unquoted, 'S' in '...', 'D' in "...", 'C' in $(...), 'B' in `...`
	parens int  // in 'C': the ( opened within it and not yet closed
}

// quotedPlaceholder returns the first placeholder of the shell command
// line text that lies between single or double quotes the text itself
// opened, and that quote; ok is false when there is none. Command
// substitutions, $(...) and `...`, begin unquoted again, even within
// double quotes; a backslash escapes the next character outside single
// quotes; an unquoted # at the start of a word begins a comment to the end
// of the line. Here-documents and $'...' are not told apart.
func quotedPlaceholder(text string) (name string, quote byte, ok bool) {
	starts := map[int]string{}
	for _, m := range placeholder.FindAllStringSubmatchIndex(text, -1) {
		starts[m[0]] = text[m[2]:m[3]]
	}
	stack := []shellContext{{kind: 'T'}}
	push := func(k byte) { stack = append(stack, shellContext{kind: k}) }
	pop := func() { stack = stack[:len(stack)-1] }
	for i := 0; i < len(text); i++ {
		top := &stack[len(stack)-1]
		if name, at := starts[i]; at {
			switch top.kind {
			case 'S':
				return name, '\'', true
			case 'D':
				return name, '"', true
			}
			i += len(name) + 1
			continue
		}
		c, next := text[i], byte(0)
		if i+1 < len(text) {
			next = text[i+1]
		}
		switch {
		case top.kind == 'S':
			if c == '\'' {
				pop()
			}
		case c == '\\':
			i++
		case c == '$' && next == '(':
			push('C')
			i++
		case c == '`' && top.kind == 'B':
			pop()
		case c == '`':
			push('B')
		case top.kind == 'D':
			if c == '"' {
				pop()
			}
		case c == '\'':
			push('S')
		case c == '"':
			push('D')
		case c == '(' && top.kind == 'C':
			top.parens++
		case c == ')' && top.kind == 'C' && top.parens == 0:
			pop()
		case c == ')' && top.kind == 'C':
			top.parens--
		case c == '#' && (i == 0 || isShellBlank(text[i-1])):
			for i < len(text) && text[i] != '\n' {
				i++
			}
		}
	}
	return "", 0, false
}

func isShellBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|'
}

// shellQuoting checks that no shell template puts a variable inside
// quotes of its own (see quotedPlaceholder): its value is quoted already.
func (v validator) shellQuoting() *Error {
	for _, p := range v.d.shellTemplates() {
		if name, q, ok := quotedPlaceholder(p.t.Text); ok {
			return &Error{File: v.d.File, Line: p.t.Line, Msg: fmt.Sprintf(
				"{%s} is inside %c...%c quotes in %s; variables are quoted for you: remove the quotes around {%s}", name, q, q, p.where, name)}
		}
	}
	return nil
}

// shellTemplates are the templates that are shell command lines, whose
// variables ExpandShell inserts as shell words.
func (d *Description) shellTemplates() []placedTemplate {
	out := []placedTemplate{{"start", d.Start}, {"wipe", d.Wipe}, {"up.command", d.Up.Command}, {"client.command", d.Client.Command}}
	if d.Ready != nil {
		out = append(out, placedTemplate{"ready.command", d.Ready.Command})
	}
	if d.State != nil {
		out = append(out, placedTemplate{"state.command", d.State.Command})
	}
	return out
}
