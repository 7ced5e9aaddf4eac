package described

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// knownKeys lists the YAML keys of the schema type yaml.v3 names typeName
// ("described.Rule"), sorted; nil for a type not in the schema.
func knownKeys(typeName string) []string {
	var keys []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		if t.String() == typeName {
			keys = structKeys(t)
		}
		for i := range t.NumField() {
			walk(t.Field(i).Type)
		}
	}
	walk(reflect.TypeFor[Spec]())
	return keys
}

// structKeys are the YAML keys of struct t, inline structs' included.
func structKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case opts == "inline":
			keys = append(keys, structKeys(f.Type)...)
		case name != "" && name != "-":
			keys = append(keys, name)
		}
	}
	slices.Sort(keys)
	return keys
}

// keyPathAt finds the key called key on line in the mapping top and
// returns the path of the mapping holding it ("client.http.read"), "" for
// top itself.
func keyPathAt(top *yaml.Node, key string, line int) string {
	var found string
	var walk func(n *yaml.Node, path string) bool
	walk = func(n *yaml.Node, path string) bool {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == key && k.Line == line {
					found = path
					return true
				}
				if walk(v, join(path, k.Value)) {
					return true
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if walk(c, path+"["+strconv.Itoa(i)+"]") {
					return true
				}
			}
		}
		return false
	}
	walk(top, "")
	return found
}

// lineOf returns the line of the deepest key of path (keys, or list
// indexes as numbers) that the mapping top holds, 1 when it holds none.
func lineOf(top *yaml.Node, path ...string) int {
	line, n := 1, top
	for _, p := range path {
		next := (*yaml.Node)(nil)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					line, next = n.Content[i].Line, n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(p); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
