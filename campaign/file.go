// Package campaign runs a campaign: the tests of a campaign file, each a
// `chaos run` a number of times, gathered into one verdict per test, a
// campaign.json, a JUnit XML report and statistics over repeated runs
// (detection rate, time to the first anomaly, throughput).
//
// A campaign file (YAML) lists tests by name; each test is any `chaos run`
// options plus an expected verdict and a run count, and the file's
// defaults apply to every test:
//
//	defaults:
//	  time-limit: 30s
//	tests:
//	  - name: partition
//	    nemesis: partition
//	  - name: stale-read
//	    bug: stale-read
//	    nemesis: partition
//	    expect: invalid
//	    count: 3
//
// This package reads the file's shape (names, expect, count, where each
// option is); whether an option exists and its value is right is checked
// by the code that checks `chaos run`'s flags, which sees every option with
// the line it came from.
package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"chaos/internal/inputfile"
)

// Expected verdicts of a test.
const (
	ExpectValid   = "valid"
	ExpectInvalid = "invalid"
)

// Keys of a test that are not `chaos run` options.
const (
	keyName   = "name"
	keyExpect = "expect"
	keyCount  = "count"
)

// reserved are `chaos run` options a campaign sets itself, with why.
var reserved = map[string]string{
	"store":      "the store is test-all's --store",
	"test-count": "use count: N",
	"keep-going": "a campaign always runs every count",
}

// Option is one option of a test: a `chaos run` flag name without its
// dashes, and its values (several for a YAML list), with the line it is on.
type Option struct {
	Name   string
	Values []string
	Line   int
}

// Test is one test of a campaign file.
type Test struct {
	Name string
	// Options are the file's defaults and then the test's own, in file
	// order; a later option replaces an earlier one of the same name.
	Options []Option
	Expect  string // ExpectValid or ExpectInvalid
	Count   int    // runs, at least 1
	Line    int    // where the test begins
}

// File is a parsed campaign file.
type File struct {
	Path  string
	Tests []Test
	// SHA256 is the file's contents' hash, hex: what tells shards of one
	// campaign from those of another (Merge).
	SHA256 string
}

// Names are the file's tests' names, in its order.
func (f *File) Names() []string {
	names := make([]string, len(f.Tests))
	for i, t := range f.Tests {
		names[i] = t.Name
	}
	return names
}

// Error is a problem with a campaign file: one line naming the file and
// the line, what is wrong and how to fix it.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// maxFileBytes bounds a campaign file: a few KiB of YAML.
const maxFileBytes = 16 << 20

// ReadFile reads and parses the campaign file at path (a regular file of
// at most 16 MiB). Every error is an *Error.
func ReadFile(path string) (*File, error) {
	b, err := inputfile.ReadFile(path, maxFileBytes)
	if err != nil {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("cannot be read: %v", errors.Unwrap(err))}
	}
	return Parse(path, b)
}

// Parse parses a campaign file's contents; path names it in errors.
func Parse(path string, data []byte) (*File, error) {
	p := parser{path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.yamlError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, p.errorf(0, "is empty; list tests under tests:, each with a name")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root.Line, "want a mapping with defaults: and tests:")
	}
	var defaults []Option
	var tests *yaml.Node
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "defaults":
			opts, err := p.options(v)
			if err != nil {
				return nil, err
			}
			defaults = opts
		case "tests":
			tests = v
		default:
			return nil, p.errorf(k.Line, "unknown key %q; a campaign file has defaults: and tests:", k.Value)
		}
	}
	if tests == nil {
		return nil, p.errorf(root.Line, "no tests:; list the tests under tests:, each with a name")
	}
	f, err := p.tests(tests, defaults)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	f.SHA256 = hex.EncodeToString(sum[:])
	return f, nil
}

// parser reads one file.
type parser struct{ path string }

func (p parser) errorf(line int, format string, args ...any) error {
	return &Error{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// yamlError turns the YAML library's "yaml: line N: msg" into an Error at
// line N.
func (p parser) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line, msg = l, after
			}
		}
	}
	return p.errorf(line, "does not parse as YAML: %s; fix the syntax", msg)
}

// tests reads the list of tests.
func (p parser) tests(list *yaml.Node, defaults []Option) (*File, error) {
	if list.Kind != yaml.SequenceNode {
		return nil, p.errorf(list.Line, "tests: want a list of tests, each with a name")
	}
	if len(list.Content) == 0 {
		return nil, p.errorf(list.Line, "tests: the list is empty; add at least one test with a name")
	}
	f := &File{Path: p.path}
	seen := map[string]int{}
	for _, n := range list.Content {
		t, err := p.test(n, defaults)
		if err != nil {
			return nil, err
		}
		if first, ok := seen[t.Name]; ok {
			return nil, p.errorf(t.Line, "a second test named %q (the first is on line %d); give each test its own name", t.Name, first)
		}
		seen[t.Name] = t.Line
		f.Tests = append(f.Tests, t)
	}
	return f, nil
}

// test reads one test.
func (p parser) test(n *yaml.Node, defaults []Option) (Test, error) {
	t := Test{Expect: ExpectValid, Count: 1, Line: n.Line, Options: append([]Option(nil), defaults...)}
	if n.Kind != yaml.MappingNode {
		return t, p.errorf(n.Line, "a test must be a mapping with a name and chaos run options")
	}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case keyName:
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
				return t, p.errorf(v.Line, "name: want a non-empty name")
			}
			t.Name = v.Value
		case keyExpect:
			if v.Value != ExpectValid && v.Value != ExpectInvalid {
				return t, p.errorf(v.Line, "expect %q: want %s or %s", v.Value, ExpectValid, ExpectInvalid)
			}
			t.Expect = v.Value
		case keyCount:
			c, err := strconv.Atoi(v.Value)
			if err != nil || c < 1 {
				return t, p.errorf(v.Line, "count %q: want a whole number of runs, at least 1", v.Value)
			}
			t.Count = c
		default:
			opt, err := p.option(k, v)
			if err != nil {
				return t, err
			}
			t.Options = append(t.Options, opt)
		}
	}
	if t.Name == "" {
		return t, p.errorf(n.Line, "a test without a name; add name: to it")
	}
	return t, nil
}

// options reads a mapping of options (the defaults).
func (p parser) options(n *yaml.Node) ([]Option, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n.Line, "defaults: want a mapping of chaos run options")
	}
	var out []Option
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case keyName, keyExpect, keyCount:
			return nil, p.errorf(k.Line, "defaults: %s belongs to each test, not to the defaults", k.Value)
		}
		opt, err := p.option(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, opt)
	}
	return out, nil
}

// option reads one option: a scalar, or a list of scalars.
func (p parser) option(k, v *yaml.Node) (Option, error) {
	name := strings.TrimPrefix(k.Value, "--")
	if why, ok := reserved[name]; ok {
		return Option{}, p.errorf(k.Line, "option %s cannot be set in a campaign file: %s", name, why)
	}
	opt := Option{Name: name, Line: k.Line}
	switch v.Kind {
	case yaml.ScalarNode:
		opt.Values = []string{v.Value}
	case yaml.SequenceNode:
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return Option{}, p.errorf(e.Line, "option %s: want a value or a list of values", name)
			}
			opt.Values = append(opt.Values, e.Value)
		}
	default:
		return Option{}, p.errorf(v.Line, "option %s: want a value or a list of values", name)
	}
	return opt, nil
}
