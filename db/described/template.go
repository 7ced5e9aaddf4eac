package described

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"chaos/control"
)

// placeholder is the only thing a template expands: {name}, name of
// [a-z0-9_]. `{"key":1}` and `{ }` stay as they are.
var placeholder = regexp.MustCompile(`\{([a-z0-9_]+)\}`)

// Template is a string of the description with {name} placeholders. The
// zero Template is absent.
type Template struct {
	Text string
	// Line is where the template is in its file, for errors.
	Line int
	set  bool
}

// UnmarshalYAML takes a scalar and remembers its line.
func (t *Template) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &Error{Line: n.Line, Msg: "want a string here, not a " + kindName(n) + "; quote the value"}
	}
	*t = Template{Text: n.Value, Line: n.Line, set: true}
	return nil
}

// IsSet reports whether the file gave the template.
func (t Template) IsSet() bool { return t.set }

// Names returns the variables t uses, in order of appearance.
func (t Template) Names() []string {
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(t.Text, -1) {
		names = append(names, m[1])
	}
	return names
}

// Expand replaces every placeholder with its variable's value, as it is.
// Load has checked that every name is a variable of the template's
// context; a name v lacks expands to "".
func (t Template) Expand(v Vars) string {
	return placeholder.ReplaceAllStringFunc(t.Text, func(m string) string { return v[m[1:len(m)-1]] })
}

// ExpandShell replaces every placeholder with its value as one shell word
// (quoted when needed), for a template that is a shell command line.
// bug_flags is already a list of shell words and is inserted as it is.
func (t Template) ExpandShell(v Vars) string {
	return placeholder.ReplaceAllStringFunc(t.Text, func(m string) string {
		name := m[1 : len(m)-1]
		if name == VarBugFlags {
			return v[name]
		}
		return control.ShellQuote(v[name])
	})
}

// Vars are the values of a template's variables, by name.
type Vars map[string]string

// With returns a copy of v with the pairs (name, value, name, value...)
// added.
func (v Vars) With(pairs ...string) Vars {
	out := make(Vars, len(v)+len(pairs)/2)
	for k, x := range v {
		out[k] = x
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = pairs[i+1]
	}
	return out
}

// kindName names a YAML node's kind in an error.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// joinNames lists names for a message: "a, b, c".
func joinNames(names []string) string { return strings.Join(names, ", ") }
