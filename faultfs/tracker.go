package faultfs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Tracker keeps what is not durable in one backing store, and what a
// power loss does to it. Every change the file system makes goes through
// it, under one lock, so that what it saved always matches the store.
type Tracker struct {
	mu    sync.Mutex
	now   func() time.Time
	files map[uint64]*fileState
	names *names
	errs  *ErrorMode
	// model is when name changes become durable.
	model Names
	// undo is where the old bytes of files are saved, and their bound.
	undo undoStore

	// open counts the files of the mount open now (handles not released).
	open atomic.Int64

	// afterPowerLoss, if set, runs after a power loss, without t.mu (the
	// mount drops the kernel's caches there).
	afterPowerLoss func()
}

// Options are the choices a file system is served with; the zero value
// is the defaults.
type Options struct {
	// Names is when name changes become durable ("" is NamesPOSIX).
	Names Names
	// UndoMemory bounds the old bytes of files kept in memory to undo
	// their changes at a power loss (0 is DefaultUndoMemory); past it
	// they go to spill files in the backing store (see undoStore).
	UndoMemory int64
}

// check says, in one line, what is wrong with o.
func (o Options) check() error {
	if o.UndoMemory < 0 {
		return fmt.Errorf("undo memory bound %d is negative", o.UndoMemory)
	}
	return nil
}

// NewTracker tracks the backing store at root (an absolute path), whose
// content now is durable, reading the time from now, with the options
// opts. It empties the trash of an earlier file system.
func NewTracker(root string, now func() time.Time, opts Options) (*Tracker, error) {
	if opts.Names == "" {
		opts.Names = NamesPOSIX
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	if opts.UndoMemory == 0 {
		opts.UndoMemory = DefaultUndoMemory
	}
	t := &Tracker{now: now, files: map[uint64]*fileState{}, names: newNames(root), model: opts.Names}
	t.undo = undoStore{dir: t.names.trash, limit: opts.UndoMemory}
	if err := os.RemoveAll(t.names.trash); err != nil {
		return nil, fmt.Errorf("empty the trash: %w", err)
	}
	if err := os.Mkdir(t.names.trash, 0o700); err != nil {
		return nil, fmt.Errorf("make the trash: %w", err)
	}
	return t, nil
}

// dataChange runs op, which makes the change c to the file ino, after
// saving what of the bytes c may change is durable. open opens the file
// read-write if it has no state yet. (A file created since it was last
// durable needs nothing more: it was empty when it got its state, before
// its first change.)
func (t *Tracker) dataChange(ino uint64, open func() (*os.File, error), c change, op func() syscall.Errno) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.injected(OnWrites); e != 0 {
		return e
	}
	st := t.files[ino]
	switch {
	case st == nil:
		var err error
		if st, err = openState(open); err != nil {
			return errnoOf(err)
		}
		t.files[ino] = st
	case !st.pending:
		if err := st.begin(); err != nil {
			return errnoOf(err)
		}
	}
	a, b := c.a, c.b
	if b < 0 {
		b = st.durable
	}
	if err := st.save(a, b, &t.undo); err != nil {
		t.undo.refused++
		return errnoOf(err)
	}
	errno := op()
	st.changed(c, errno == 0)
	return errno
}

// fileSynced runs sync (the backing store's fsync or fdatasync) and then
// makes the file ino durable as it is. Its state stays, not pending, for
// the file's next change, until a handle of the file is released.
func (t *Tracker) fileSynced(ino uint64, sync func() error) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.injected(OnFsyncs); e != 0 {
		return e
	}
	if err := sync(); err != nil {
		return errnoOf(err)
	}
	if st := t.files[ino]; st != nil {
		st.synced(&t.undo)
	}
	if t.model == NamesOrdered {
		t.names.syncedAll()
	}
	return 0
}

// released is called when a handle of the file ino is released: the
// file's state goes if nothing is pending (a later change opens the file
// again), so that a closed file keeps a descriptor only while it has
// something to undo.
func (t *Tracker) released(ino uint64) {
	t.open.Add(-1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.files[ino]; st != nil && !st.pending {
		st.fd.Close()
		delete(t.files, ino)
	}
}

// nameChange runs op, which changes the names of paths (full backing
// paths), remembering what they referred to (names.change).
func (t *Tracker) nameChange(paths []string, op func() error) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.injected(OnWrites); e != 0 {
		return e
	}
	return errnoOf(t.names.change(paths, op))
}

// nameRemoval is nameChange for a change that frees space (unlink,
// rmdir): injected errors do not refuse it.
func (t *Tracker) nameRemoval(paths []string, op func() error) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	return errnoOf(t.names.change(paths, op))
}

// dirSynced runs sync (the backing directory's fsync) and then makes the
// names in the directory at path durable.
func (t *Tracker) dirSynced(path string, sync func() error) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.injected(OnFsyncs); e != 0 {
		return e
	}
	if err := sync(); err != nil {
		return errnoOf(err)
	}
	if t.model == NamesOrdered {
		t.names.syncedAll()
		return 0
	}
	b, err := bindingAt(path)
	if err != nil {
		return errnoOf(err)
	}
	t.names.synced(b.ino)
	return 0
}

// PowerLoss puts the backing store back to its durable state: every file
// to its durable size and content, every name to what it referred to at
// its directory's last fsync. Nothing may use the files meanwhile (the
// programs that wrote them are dead). It answers what it dropped.
func (t *Tracker) PowerLoss() (Status, error) {
	before, err := t.powerLoss()
	if t.afterPowerLoss != nil {
		t.afterPowerLoss()
	}
	return before, err
}

func (t *Tracker) powerLoss() (Status, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	before := t.status()
	var errs []error
	for ino, st := range t.files {
		if err := st.revert(&t.undo); err != nil {
			errs = append(errs, fmt.Errorf("file %d: %w", ino, err))
		}
		delete(t.files, ino)
	}
	if err := t.names.revert(); err != nil {
		errs = append(errs, err)
	}
	return before, errors.Join(errs...)
}

// errnoOf is the errno a FUSE request answers for err.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// OpenFiles is how many files of the mount are open now. The kernel
// releases a file shortly after its last descriptor closes (a killed
// program's too), not at once.
func (t *Tracker) OpenFiles() int64 { return t.open.Load() }
