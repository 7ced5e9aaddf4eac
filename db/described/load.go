package described

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"chaos/internal/inputfile"
)

// Description is a loaded and validated description file.
type Description struct {
	Spec
	// File is the path it was loaded from, as given.
	File string
	// Dir is the file's directory, absolute: relative upload sources and
	// client commands are taken from there.
	Dir string
	// httpLine is the line of client.http, for Supports.
	httpLine int
}

// IsPath reports whether --db's value names a description file (ends in
// .yaml or .yml) rather than a built-in system.
func IsPath(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// maxFileBytes bounds a description file: a few KiB of YAML.
const maxFileBytes = 16 << 20

// Load reads, parses and validates the description file at path (a
// regular file of at most 16 MiB). Every error is an *Error: the file, the
// line, what is wrong and how to fix it.
func Load(path string) (*Description, error) {
	data, err := inputfile.ReadFile(path, maxFileBytes)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the description (%v); give the path of a .yaml file", unwrapPathError(err))}
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(path, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: path, Line: 1, Msg: "the description is empty; start from examples/systems/chaos-node.yaml"}
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, &Error{File: path, Line: top.Line, Msg: "the description must be a mapping of keys (name, start, client, ...); start from examples/systems/chaos-node.yaml"}
	}
	var spec Spec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil && !errors.Is(err, io.EOF) {
		return nil, decodeError(path, top, err)
	}
	d := &Description{Spec: spec, File: path, Dir: dir, httpLine: lineOf(top, "client", "http")}
	if err := d.validate(top); err != nil {
		return nil, err
	}
	return d, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var (
	yamlLineRe     = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	typeLineRe     = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownFieldRe = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
)

// syntaxError is a file that is not YAML.
func syntaxError(path string, err error) *Error {
	line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		// yaml.v3 numbers the lines of its parser's errors from 0 (its
		// scanner's from 1): theirs all say "did not find expected".
		if strings.HasPrefix(msg, "did not find expected") {
			line++
		}
	}
	return &Error{File: path, Line: line, Msg: "not valid YAML: " + msg + "; fix the syntax (indentation, quotes, brackets) there"}
}

// decodeError turns a decoding error into an *Error: the first one, with
// an unknown key named along with the keys known at its place.
func decodeError(path string, top *yaml.Node, err error) *Error {
	var de *Error
	if errors.As(err, &de) {
		de.File = path
		return de
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return syntaxError(path, err)
	}
	m := typeLineRe.FindStringSubmatch(te.Errors[0])
	if m == nil {
		return &Error{File: path, Line: 1, Msg: te.Errors[0]}
	}
	line, _ := strconv.Atoi(m[1])
	if u := unknownFieldRe.FindStringSubmatch(m[2]); u != nil {
		where := keyPathAt(top, u[1], line)
		return &Error{File: path, Line: line, Msg: fmt.Sprintf("unknown key %q%s; the keys there are %s: fix the spelling or remove it",
			u[1], inWhere(where), joinNames(knownKeys(u[2])))}
	}
	return &Error{File: path, Line: line, Msg: "wrong kind of value: " + m[2] + "; see docs/FORMATS.md, \"Described systems\", for what each key takes"}
}

func inWhere(where string) string {
	if where == "" {
		return " at the top level"
	}
	return " in " + where
}
