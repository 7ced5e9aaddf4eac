package described

import (
	"fmt"
	"strings"
)

// A shell template's placeholders are each expanded to one shell word,
// quoted as needed (Template.ExpandShell): as it is when the value has only
// characters no shell treats specially, else between single quotes, a '
// within written '\''. That word is safe only where the shell reads it as
// a word of a command: unquoted, in a command substitution $(...), in the
// word of an unquoted ${name-word} (and :-, =, ?, + and the #, % patterns),
// or in a bash here-string <<<. Load refuses a template with a placeholder
// anywhere else (unsafePlaceholder finds the first):
//
//   - inside quotes the template opens itself, '...', "..." or bash's
//     $'...': the value would be quoted twice, and a quote in it would end
//     the template's, leaving the rest of it unquoted;
//   - inside backquotes `...`: the shell finds the closing ` before it reads
//     any quote, so a ` in the value ends the command there (bash then runs
//     what follows), and a \ in the value is read as an escape;
//   - in a here-document's body, whatever its delimiter: under an unquoted
//     one the shell runs any $(...) of the value, quotes being plain text
//     there; under a quoted one the quotes stay in the text, and a line of
//     the value equal to the delimiter ends the body, the rest running as
//     commands. As the delimiter itself too;
//   - inside arithmetic, $((...)) (and bash's $[...], ((...)), and the
//     subscript or substring of a ${...}): the expression is read as if in
//     double quotes, so a $(...) in the value runs, and bash evaluates an
//     array index of it (a[$(...)]) even when it comes from a variable;
//   - in a comment: a newline in the value (members' separator may be one)
//     ends the comment and the rest runs;
//   - right after a $ (as in ${name}), which bash reads with the quoted
//     value as $'...' escapes, where \' does not end it; after a \, which
//     escapes the quote the value begins with; as the name in a ${...}.
//
// The template is read twice, as dash and as bash read it, for they differ
// ($'...' is bash's alone; dash reads $ and then '...'): a placeholder must
// be safe for both.

// shellHazard is a placeholder at a place where its quoted value is not
// one plain shell word; context and fix complete "{name} is CONTEXT in
// WHERE; FIX".
type shellHazard struct {
	name    string
	at      int // the offset of the placeholder's { in the template
	context string
	fix     string
}

// unsafePlaceholder returns the first placeholder of the shell command line
// text that lies where its quoted value is unsafe (see above), as dash or
// bash reads the text, or nil when there is none.
func unsafePlaceholder(text string) *shellHazard {
	var first *shellHazard
	for _, bash := range []bool{false, true} {
		if h := newShellScanner(text, bash).run(); h != nil && (first == nil || h.at < first.at) {
			first = h
		}
	}
	return first
}

// shellQuoting checks that every placeholder of every shell template is
// where its quoted value is one plain shell word (see unsafePlaceholder).
func (v validator) shellQuoting() *Error {
	for _, p := range v.d.shellTemplates() {
		if h := unsafePlaceholder(p.t.Text); h != nil {
			return &Error{File: v.d.File, Line: p.t.Line, Msg: fmt.Sprintf("{%s} is %s in %s; %s", h.name, h.context, p.where, h.fix)}
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

// The hazards' contexts and fixes.

func quotedHazard(name, open, close string) *shellHazard {
	return &shellHazard{name: name, context: "inside " + open + "..." + close + " quotes",
		fix: "variables are quoted for you: remove the quotes around {" + name + "}"}
}

func arithmeticHazard(name, where string) *shellHazard {
	return &shellHazard{name: name, context: "inside " + where,
		fix: fmt.Sprintf("the shell evaluates the value there as an expression, whatever its quotes, and runs a $(...) in it: "+
			"set a variable before the command (v={%s}), check that it is a number (case $v in ''|*[!0-9]*) exit 1;; esac), then use $v", name)}
}

func backquoteHazard(name string) *shellHazard {
	return &shellHazard{name: name, context: "inside `...` backquotes",
		fix: "the shell finds the closing ` before it reads any quotes, so a ` or \\ in the value changes the command: write $(...) instead of `...`"}
}

func commentHazard(name string) *shellHazard {
	return &shellHazard{name: name, context: "in a comment",
		fix: fmt.Sprintf("a newline in the value would end the comment and the rest would run: take {%s} out of the comment", name)}
}

func dollarHazard(name string) *shellHazard {
	return &shellHazard{name: name, context: "right after a $",
		fix: fmt.Sprintf("bash reads $ and the quoted value as $'...' escapes, and a plain value as a variable's name: remove the $ (write {%s}, not ${%s})", name, name)}
}

func backslashHazard(name string) *shellHazard {
	return &shellHazard{name: name, context: "right after a \\",
		fix: fmt.Sprintf("it escapes the quote the value begins with, leaving the value unquoted: remove the \\ before {%s}", name)}
}

func paramNameHazard(name string) *shellHazard {
	return &shellHazard{name: name, context: "the name in ${...}",
		fix: fmt.Sprintf("a value is no variable's name: write {%s} alone, or set a variable first (v={%s}) and write ${v...}", name, name)}
}

func heredocHazard(name string, h heredoc) *shellHazard {
	op := "<<" + h.word
	if h.tabs {
		op = "<<-" + h.word
	}
	why := "where the shell runs any $(...) of the value, whatever its quotes"
	if h.quoted {
		why = fmt.Sprintf("where its quotes stay in the text, and a line %s in the value would end the body early and run the rest", h.delim)
	}
	return &shellHazard{name: name, context: "in the body of here-document " + op,
		fix: fmt.Sprintf("%s: set a variable before the command (v={%s}) and write $v in the body, under an unquoted delimiter", why, name)}
}

func heredocWordHazard(name string) *shellHazard {
	return &shellHazard{name: name, context: "in the delimiter of a here-document",
		fix: "write a fixed word such as EOF there"}
}

// isShellBlank reports whether a # after c begins a comment: c ends a word.
func isShellBlank(c byte) bool {
	return strings.IndexByte(" \t\n;&|()<>", c) >= 0
}
