package campaign

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"chaos/atomicfile"
)

// runDir is one run's directory in the store (docs/FORMATS.md's store layout).
type runDir struct {
	root string // the store
	name string // the test name
	dir  string // store/<name>/<time>
}

// newRunDir creates store/<name>/<UTC time>/ and points the latest links at
// it. It fails when the store cannot be written.
func newRunDir(store, name string, now time.Time) (*runDir, error) {
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
