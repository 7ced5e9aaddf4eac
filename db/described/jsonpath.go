package described

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Path names fields of a JSON document: keys and list indexes separated
// by dots ("kvs.0.value"), where * stands for every element of a list
// ("kvs.*.value"). The zero Path is absent.
type Path struct {
	Text string
	Line int
	segs []string
}

// UnmarshalYAML takes a path such as header.member_id.
func (p *Path) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &Error{Line: n.Line, Msg: "want a field path such as header.member_id or kvs.0.value"}
	}
	parsed, err := ParsePath(n.Value)
	if err != nil {
		return &Error{Line: n.Line, Msg: err.Error()}
	}
	parsed.Line = n.Line
	*p = parsed
	return nil
}

// ParsePath parses a field path such as kvs.*.value.
func ParsePath(s string) (Path, error) {
	if s == "" {
		return Path{}, fmt.Errorf("want a field path such as header.member_id or kvs.0.value")
	}
	segs := strings.Split(s, ".")
	for _, seg := range segs {
		if seg == "" {
			return Path{}, fmt.Errorf("field path %q has an empty part; separate names with single dots, as in kvs.0.value", s)
		}
	}
	return Path{Text: s, segs: segs}, nil
}

// IsSet reports whether the file gave the path.
func (p Path) IsSet() bool { return len(p.segs) > 0 }

// Wild reports whether the path has a *.
func (p Path) Wild() bool {
	for _, s := range p.segs {
		if s == "*" {
			return true
		}
	}
	return false
}

// Decode parses a JSON body for Get, keeping numbers as written.
func Decode(body []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// Get returns the values at p in doc (from Decode): one at most for a path
// without *, every match for one with. A missing field, an index out of
// range, or a step into a value of another kind matches nothing.
func (p Path) Get(doc any) []any {
	vals := []any{doc}
	for _, seg := range p.segs {
		var next []any
		for _, v := range vals {
			next = append(next, step(v, seg)...)
		}
		vals = next
	}
	return vals
}

func step(v any, seg string) []any {
	switch x := v.(type) {
	case map[string]any:
		if c, ok := x[seg]; ok {
			return []any{c}
		}
	case []any:
		if seg == "*" {
			return x
		}
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
			return []any{x[i]}
		}
	}
	return nil
}

// Text is a JSON value as text: a string as it is, a number as written,
// true, false, null, and anything else as compact JSON.
func Text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
