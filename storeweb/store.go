package storeweb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// NoStoreError is Open's error for a store that does not exist, is not a
// directory or cannot be read.
type NoStoreError struct {
	Dir string
	Why string // "does not exist", ...
}

func (e *NoStoreError) Error() string { return "store " + e.Dir + " " + e.Why }

// ErrRefused marks a path the store will not serve: not a plain relative
// path inside the store, or one that a symlink leads out of it.
var ErrRefused = errors.New("refused")

// Store is a store directory opened for reading. Every call reads the
// directory afresh; the only thing it remembers is each run's summary,
// with the identity of the results.json it came from (summaryCache), so a
// changed results.json is read again. Its methods may be called from many
// goroutines at once.
type Store struct {
	dir  string   // the store's absolute path, symlinks resolved
	root *os.Root // every file is checked through it before it is read or served, so none outside dir is
	// summaries is what the store remembers.
	summaries summaryCache
}

// Open opens the store directory dir. A dir that does not exist, is not a
// directory or cannot be read is a *NoStoreError.
func Open(dir string) (*Store, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &NoStoreError{Dir: dir, Why: "does not exist"}
	case err != nil:
		return nil, &NoStoreError{Dir: dir, Why: "cannot be read: " + err.Error()}
	case !st.IsDir():
		return nil, &NoStoreError{Dir: dir, Why: "is not a directory"}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	return &Store{dir: real, root: root}, nil
}

// Close releases the store's directory handle.
func (s *Store) Close() error { return s.root.Close() }

// Dir is the store's absolute path, symlinks resolved.
func (s *Store) Dir() string { return s.dir }

// abs is the path on disk of rel, a path checked by join.
func (s *Store) abs(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

// join makes a store-relative path of segments, each a single path element
// (a directory or file name, as a URL's wildcard gives it), then rest, a
// slash-separated path below them (may be ""). Anything but plain names
// ("", ".", "..", a slash inside a segment) is ErrRefused.
func join(segments []string, rest string) (string, error) {
	for _, seg := range segments {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, `/\`) {
			return "", fmt.Errorf("%w: %q is not a name in the store", ErrRefused, seg)
		}
	}
	p := path.Join(segments...)
	if rest != "" {
		if !fs.ValidPath(rest) || strings.Contains(rest, `\`) {
			return "", fmt.Errorf("%w: %q is not a path in the store", ErrRefused, rest)
		}
		p += "/" + rest
	}
	return p, nil
}

// dirAt is the path of the store directory that segments name (single
// names, as join takes them), with join's and stat's errors; a file that
// is not a directory is fs.ErrNotExist.
func (s *Store) dirAt(segments ...string) (string, error) {
	rel, err := join(segments, "")
	if err != nil {
		return "", err
	}
	st, err := s.stat(rel)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory: %w", rel, fs.ErrNotExist)
	}
	return rel, nil
}

// stat is os.Root.Stat: it follows symlinks that stay in the store. An
// error other than a missing file (a symlink leading out of the store,
// most likely) is ErrRefused.
func (s *Store) stat(rel string) (fs.FileInfo, error) {
	st, err := s.root.Stat(rel)
	return st, refusal(err)
}

// open is os.Root.Open, with stat's errors.
func (s *Store) open(rel string) (*os.File, error) {
	f, err := s.root.Open(rel)
	return f, refusal(err)
}

// refusal wraps err in ErrRefused unless it says a file is missing; the
// message names the path and why, without the system call.
func refusal(err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: %s: %v", ErrRefused, pe.Path, pe.Err)
	}
	return fmt.Errorf("%w: %v", ErrRefused, err)
}
