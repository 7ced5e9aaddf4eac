// Package snap stores snapshots of the chaos-node KV state: whole files,
// each written atomically and checked by a CRC32C, of which the newest few
// are kept.
package snap

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"chaos/internal/atomicfile"
)

var (
	// ErrNoSnapshot means the directory holds no snapshot file.
	ErrNoSnapshot = errors.New("snap: no snapshot")
	// ErrCorrupt means snapshot files exist but none passes its checksum.
	ErrCorrupt = errors.New("snap: every snapshot is corrupt")
)

// Keep is how many snapshots Save leaves in the directory, newest first.
const Keep = 3

// Snapshotter saves and loads the snapshots in one directory. Its methods
// are safe for concurrent use. It takes no lock on the directory: the
// caller (the node, holding the WAL lock on the data directory) must be the
// only process using it.
type Snapshotter struct {
	dir    string
	log    *slog.Logger
	syncer Syncer
	// noDirSync is the no-dir-fsync planted bug (WithNoDirSync).
	noDirSync bool
	mu        sync.Mutex // serialises Save and Load so pruning never races a read
}

// Syncer makes what Save wrote durable: SyncFile a file's data and size,
// SyncDir the names created, renamed and removed in a directory. A test
// injects one to observe every fsync boundary.
type Syncer interface {
	SyncFile(f *os.File) error
	SyncDir(dir string) error
}

// osSyncer is fsync(2) of the file and of the directory.
type osSyncer struct{}

func (osSyncer) SyncFile(f *os.File) error { return f.Sync() }
func (osSyncer) SyncDir(dir string) error  { return atomicfile.SyncDir(dir) }

// Option configures New.
type Option func(*Snapshotter)

// WithLogger sends warnings (a corrupt snapshot skipped) to l instead of
// discarding them.
func WithLogger(l *slog.Logger) Option { return func(s *Snapshotter) { s.log = l } }

// WithSyncer makes Save sync through y instead of fsync(2).
func WithSyncer(y Syncer) Option { return func(s *Snapshotter) { s.syncer = y } }

// WithNoDirSync plants the no-dir-fsync bug: Save renames a snapshot into
// place, and prunes old ones, without fsyncing the directory, so a power
// loss can take the new snapshot's name away (and bring pruned ones back).
func WithNoDirSync() Option { return func(s *Snapshotter) { s.noDirSync = true } }

// New returns a Snapshotter for dir, creating dir if needed and removing
// temporary files that a crash during Save left behind.
func New(dir string, opts ...Option) (*Snapshotter, error) {
	s := &Snapshotter{dir: dir, log: slog.New(slog.DiscardHandler), syncer: osSyncer{}}
	for _, o := range opts {
		o(s)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot dir: %w", err)
	}
	_, temps, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range temps {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove unfinished snapshot: %w", err)
		}
	}
	return s, nil
}

// Save durably stores data as the snapshot at (term, index) and then deletes
// all but the Keep newest snapshots. The file is written under a temporary
// name, fsynced, renamed into place and the directory fsynced, so a crash
// leaves either no file of that name or a complete one. Saving an existing
// (term, index) replaces it. Once Save returns nil the snapshot is durable; an
// error that mentions pruning means it is durable but old files remain.
func (s *Snapshotter) Save(term, index uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := fileName(term, index)
	if err := s.write(name, encode(term, index, data)); err != nil {
		return fmt.Errorf("save snapshot %s: %w", filepath.Join(s.dir, name), err)
	}
	if err := s.prune(); err != nil {
		return fmt.Errorf("snapshot %s saved, but pruning old ones failed: %w", name, err)
	}
	return nil
}

// write atomically creates the file name holding contents, readable by
// the owner only: written under a temporary name (which New removes after
// a crash), fsynced, renamed into place, and the directory fsynced.
func (s *Snapshotter) write(name string, contents []byte) error {
	tmp := filepath.Join(s.dir, name+tempSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(contents)
	if err == nil {
		err = s.syncer.SyncFile(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return s.syncNames()
}

// syncNames fsyncs the directory after names in it changed, unless the
// no-dir-fsync bug skips it.
func (s *Snapshotter) syncNames() error {
	if s.noDirSync {
		return nil
	}
	return s.syncer.SyncDir(s.dir)
}

// prune deletes every snapshot file but the Keep newest.
func (s *Snapshotter) prune() error {
	files, _, err := listFiles(s.dir)
	if err != nil || len(files) <= Keep {
		return err
	}
	for _, f := range files[Keep:] {
		if err := os.Remove(filepath.Join(s.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return s.syncNames()
}

// Load returns the newest snapshot that passes its checksum. A corrupt one is
// skipped with a warning and the next older one tried, so the snapshot
// returned may be older than the newest saved: the caller must check that its
// log continues from the returned index. No snapshot file at all gives
// ErrNoSnapshot; files that are all corrupt give ErrCorrupt. Errors reading
// a file are returned, not skipped.
func (s *Snapshotter) Load() (term, index uint64, data []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	files, _, err := listFiles(s.dir)
	if err != nil {
		return 0, 0, nil, err
	}
	if len(files) == 0 {
		return 0, 0, nil, fmt.Errorf("load snapshot from %s: %w", s.dir, ErrNoSnapshot)
	}
	for _, f := range files {
		path := filepath.Join(s.dir, f.name)
		contents, err := os.ReadFile(path)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("load snapshot: %w", err)
		}
		data, err := decode(f, contents)
		if err != nil {
			s.log.Warn("skipping corrupt snapshot", "file", path, "err", err)
			continue
		}
		return f.term, f.index, data, nil
	}
	return 0, 0, nil, fmt.Errorf("load snapshot from %s: %d files: %w", s.dir, len(files), ErrCorrupt)
}
