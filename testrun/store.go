package testrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"chaos/internal/atomicfile"
)

// MaxNameLen bounds a test name (--name).
const MaxNameLen = 200

// CheckName returns an error saying what is wrong unless name can name a
// test in the store: one directory name of letters, digits and . _ + -,
// beginning with a letter or digit (so never "." or "..", hidden, or
// taken for a flag), at most MaxNameLen bytes, and none of the store's own
// names (latest, campaigns). A name with a slash, a newline or a control
// character would write outside the store or forge lines of the output.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("is empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("is %d bytes long, more than %d", len(name), MaxNameLen)
	case !isAlnum(name[0]):
		return errors.New("must begin with a letter or a digit")
	case name == "latest" || name == "campaigns":
		return errors.New("is one of the store's own names (latest, campaigns)")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '_' && c != '+' && c != '-' {
			return fmt.Errorf("holds %q: use letters, digits and . _ + - only", c)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// runDir is one run's directory in the store (docs/FORMATS.md's store layout).
type runDir struct {
	root string // the store
	name string // the test name
	dir  string // store/<name>/<time>
}

// newRunDir creates store/<name>/<UTC time>/ and points the latest links at
// it. It fails when the store cannot be written, or name is no test name
// (CheckName; Options.Validate has refused it already).
func newRunDir(store, name string, now time.Time) (*runDir, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("test name %q %w", name, err)
	}
	stamp := now.UTC().Format("20060102T150405.000Z")
	dir := filepath.Join(store, name, stamp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store %s cannot be written: %w", store, err)
	}
	rd := &runDir{root: store, name: name, dir: dir}
	if err := rd.link(filepath.Join(store, name, "latest"), stamp); err != nil {
		return nil, err
	}
	if err := rd.link(filepath.Join(store, "latest"), filepath.Join(name, stamp)); err != nil {
		return nil, err
	}
	return rd, nil
}

// link makes path a symlink to target, replacing an older link atomically.
func (rd *runDir) link(path, target string) error {
	if err := atomicfile.Symlink(target, path); err != nil {
		return fmt.Errorf("store: link %s: %w", path, err)
	}
	return nil
}

func (rd *runDir) path(elem ...string) string {
	return filepath.Join(append([]string{rd.dir}, elem...)...)
}

// writeJSON writes v as indented JSON to a file of the run directory.
func (rd *runDir) writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(rd.path(name), append(b, '\n'), 0o644)
}
