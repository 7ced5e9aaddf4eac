package wal

import (
	"fmt"
	"os"
)

// Compact deletes the oldest segments whose entry records (records of a type
// not in Options.HeaderTypes) all have Index <= index, typically after a
// snapshot at index made them redundant. It stops at the first segment that
// holds a later entry, so only a prefix of the log is ever deleted: deleting
// a segment from the middle could resurrect entries a later segment
// overwrote. The current (last) segment is never deleted, so the header
// records rewritten at its head survive any compaction.
//
// Segments are deleted oldest first with a directory fsync after each, so a
// crash part way leaves a contiguous log.
func (w *WAL) Compact(index uint64) error {
	w.mu.Lock()
	if err := w.checkReadyLocked("compact"); err != nil {
		w.mu.Unlock()
		return err
	}
	w.acquireLocked()
	w.mu.Unlock()

	removed, err := w.compact(index)

	w.mu.Lock()
	w.releaseLocked()
	w.mu.Unlock()
	if removed > 0 {
		w.log.Info("wal compacted", "dir", w.dir, "index", index, "segments_removed", removed)
	}
	if err != nil {
		return fmt.Errorf("compact %s to index %d: %w", w.dir, index, err)
	}
	return nil
}

// compact removes the eligible prefix of segments and returns how many it
// removed. The caller owns the files.
func (w *WAL) compact(index uint64) (removed int, err error) {
	d := &w.disk
	defer func() { d.segs = append([]segment(nil), d.segs[removed:]...) }()
	for removed < len(d.segs)-1 && d.segs[removed].maxIndex <= index {
		if err := os.Remove(w.path(d.segs[removed].name)); err != nil {
			return removed, fmt.Errorf("remove segment: %w", err)
		}
		removed++
		if err := w.syncNames(); err != nil {
			return removed, err
		}
	}
	return removed, nil
}
