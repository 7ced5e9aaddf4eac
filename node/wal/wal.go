package wal

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"chaos/internal/atomicfile"
)

var (
	// ErrLocked means another process, or another open WAL in this process,
	// holds the data directory.
	ErrLocked = errors.New("wal: data directory is locked")
	// ErrCorrupt means a segment holds damage that is not a torn tail: a bad
	// record followed by valid data, a bad record in a segment that is not the
	// last, or a missing segment. The WAL refuses to guess what was lost.
	ErrCorrupt = errors.New("wal: corrupt")
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("wal: closed")
)

// DefaultSegmentBytes is the segment size used when Options.SegmentBytes is 0.
const DefaultSegmentBytes = 64 << 20

// Options configure Open. The zero value is valid.
type Options struct {
	// SegmentBytes is the size at which the next record goes into a new
	// segment file; 0 means DefaultSegmentBytes. The record written last
	// before a cut may take a segment past it.
	SegmentBytes int64
	// HeaderTypes are record types whose latest record is rewritten at the
	// head of every new segment, in this order. Records of these types are
	// never "entry records": their Index does not hold back Compact.
	HeaderTypes []uint8
	// NoSync skips every fsync. For tests and benchmarks only: it voids the
	// durability contract of Save.
	NoSync bool
	// Logger receives warnings (torn tail truncated) and notices (segment
	// cut, compaction). nil discards them.
	Logger *slog.Logger
	// Syncer makes segment files and the directory durable; nil means
	// fdatasync(2) and fsync(2). Tests inject one to see every fsync
	// boundary (the crash-consistency test cuts images there).
	Syncer Syncer
	// Bugs plants storage bugs (bugs.go); zero means none.
	Bugs Bugs
}

// Stats are counters of a WAL since Open.
type Stats struct {
	Records  uint64 // records written by Save (header rewrites not counted)
	Syncs    uint64 // fsyncs of segment files (directory fsyncs not counted)
	Segments int    // segment files present
	Bytes    int64  // bytes of records and sync blocks in the segment files present
}

type walState int

const (
	stateOpened  walState = iota // Open done, ReadAll not yet
	stateReady                   // ReadAll done, Save and Compact allowed
	stateClosing                 // Close waits for in-flight work
	stateClosed
)

// WAL is an open write-ahead log directory. Its methods are safe for
// concurrent use; ReadAll must be called once, before Save and Compact.
type WAL struct {
	dir    string
	opts   Options
	log    *slog.Logger
	isHead map[uint8]bool // set of opts.HeaderTypes; read-only after Open
	lock   *os.File       // holds the flock on dir/LOCK until Close
	// syncFile makes a segment file durable: datasync, replaced only by
	// tests (before any concurrent use) to observe, delay or fail fsyncs.
	syncFile func(*os.File) error
	// syncDir makes the names in a directory durable: fsync of it (or
	// Options.Syncer's).
	syncDir func(dir string) error
	mu      sync.Mutex
	changed *sync.Cond // broadcast when busy clears or a batch completes

	// Guarded by mu.
	state   walState
	busy    bool   // one goroutine owns the files (see disk); others wait on changed
	pending *batch // records waiting for the next write (and fsync), nil if none
	failed  error  // sticky: a write or fsync failed, the file state is unknown
	stats   Stats

	// disk is touched only by the goroutine that set busy.
	disk disk
}

// disk is the file state of the WAL, owned by whoever holds WAL.busy.
type disk struct {
	segs    []segment // present segments in order; the last is current
	file    *os.File  // the current segment, open for writing at its end
	dirty   bool      // file has writes not yet fsynced
	headers map[uint8][]byte
	syncs   uint64
}

// Open locks dir (creating it if needed) and returns the WAL in it. The
// caller must call ReadAll before Save. A second Open of the same directory,
// from this or another process, fails with an error wrapping ErrLocked until
// the first WAL is closed or its process has died.
func Open(dir string, opts Options) (*WAL, error) {
	isHead, err := checkOptions(&opts)
	if err != nil {
		return nil, fmt.Errorf("open wal %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open wal: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open wal: %w", err)
	}
	w := &WAL{
		dir:      dir,
		opts:     opts,
		log:      opts.Logger,
		isHead:   isHead,
		lock:     lock,
		syncFile: datasync,
		syncDir:  atomicfile.SyncDir,
		disk:     disk{headers: make(map[uint8][]byte)},
	}
	if opts.Syncer != nil {
		w.syncFile, w.syncDir = opts.Syncer.SyncFile, opts.Syncer.SyncDir
	}
	w.changed = sync.NewCond(&w.mu)
	return w, nil
}

// checkOptions fills defaults into opts and returns the set of header types.
func checkOptions(opts *Options) (map[uint8]bool, error) {
	if opts.SegmentBytes < 0 {
		return nil, fmt.Errorf("SegmentBytes %d is negative", opts.SegmentBytes)
	}
	if opts.SegmentBytes == 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	isHead := make(map[uint8]bool, len(opts.HeaderTypes))
	for _, t := range opts.HeaderTypes {
		if t == 0 {
			return nil, errors.New("header type 0 is reserved")
		}
		if isHead[t] {
			return nil, fmt.Errorf("header type %d listed twice", t)
		}
		isHead[t] = true
	}
	opts.HeaderTypes = append([]uint8(nil), opts.HeaderTypes...)
	return isHead, nil
}

// Stats returns the counters; it does not wait for a write in progress.
func (w *WAL) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Close waits for writes in progress, writes the records Write queued, trims the
// current segment's preallocated space (unless a write failed), closes the
// files and releases the directory lock. Save and Write calls that arrive
// after Close began fail with ErrClosed.
func (w *WAL) Close() error {
	w.mu.Lock()
	if w.state == stateClosing || w.state == stateClosed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.state = stateClosing
	for w.busy {
		w.changed.Wait()
	}
	var errs []error
	if b := w.pending; b != nil {
		// Records of Write that no Save took along (a failed WAL
		// writes nothing: flushLocked gives them its error).
		w.flushLocked(b)
		if b.err != nil {
			errs = append(errs, b.err)
		}
	}
	w.busy = true
	failed := w.failed
	w.mu.Unlock()

	if failed == nil {
		// A closed WAL's files hold their records and nothing more.
		if err := w.trimCurrent(); err != nil {
			errs = append(errs, err)
		}
	}
	if w.disk.file != nil {
		if err := w.disk.file.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close segment: %w", err))
		}
	}
	if err := w.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("release lock %s: %w", w.lock.Name(), err))
	}

	w.mu.Lock()
	w.state = stateClosed
	w.releaseLocked()
	w.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close wal %s: %w", w.dir, err)
	}
	return nil
}

// checkReadyLocked returns why Save or Compact cannot run now, or nil.
func (w *WAL) checkReadyLocked(op string) error {
	switch {
	case w.state == stateClosing || w.state == stateClosed:
		return fmt.Errorf("%s %s: %w", op, w.dir, ErrClosed)
	case w.state == stateOpened:
		return fmt.Errorf("%s %s: ReadAll must be called first", op, w.dir)
	case w.failed != nil:
		return fmt.Errorf("%s %s: an earlier write failed, reopen to recover: %w", op, w.dir, w.failed)
	}
	return nil
}

// acquireLocked waits until no goroutine owns the files and takes ownership.
func (w *WAL) acquireLocked() {
	for w.busy {
		w.changed.Wait()
	}
	w.busy = true
}

// releaseLocked gives up ownership of the files and publishes their counters.
func (w *WAL) releaseLocked() {
	w.stats.Syncs = w.disk.syncs
	w.stats.Segments = len(w.disk.segs)
	w.stats.Bytes = 0
	for _, s := range w.disk.segs {
		w.stats.Bytes += s.size
	}
	w.busy = false
	w.changed.Broadcast()
}

func (w *WAL) path(name string) string { return filepath.Join(w.dir, name) }
