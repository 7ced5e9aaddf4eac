package wal

import "os"

// Syncer makes what the WAL wrote durable. SyncFile must make f's data and
// size durable (fdatasync(2)); SyncDir the names created, renamed and
// removed in dir (fsync(2) of the directory). A test injects one to
// observe (or fail) every fsync boundary.
type Syncer interface {
	SyncFile(f *os.File) error
	SyncDir(dir string) error
}

// Bugs are planted storage bugs, off by default, used to prove that the
// storage faults (power loss, corruption) and the checks find them. Each
// voids part of the contract in the package doc ("Crash safety").
type Bugs struct {
	// LazySync: Save returns once its records are written, before they
	// are fsynced; they become durable at the next Sync (chaos-node calls
	// it on a timer), a cut or Close. A power loss in between loses
	// records whose Save returned.
	LazySync bool
	// NoDirSync: a segment created (renamed into place), a leftover
	// temporary segment removed or a compacted segment deleted is not
	// followed by an fsync of the directory, so a power loss can take a
	// new segment's name, with every record in it, away.
	NoDirSync bool
	// TrustCorrupt: ReadAll returns a record whose checksum fails as if it
	// were good, instead of truncating a torn tail at it or refusing the
	// log with ErrCorrupt.
	TrustCorrupt bool
}

// syncNames fsyncs the directory after a change of names in it, unless
// NoSync or the NoDirSync bug skips it.
func (w *WAL) syncNames() error {
	if w.opts.NoSync || w.opts.Bugs.NoDirSync {
		return nil
	}
	return w.syncDir(w.dir)
}
