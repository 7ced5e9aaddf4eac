package wal

import (
	"errors"
	"fmt"
	"os"
)

// cut starts a new segment after the current one, named with first (see the
// package doc), and makes it current. The new segment begins with the latest
// record of each header type. It is built under a temporary name, fsynced,
// renamed and the directory fsynced, so after a crash a segment name either
// does not exist or holds its complete header. The caller owns the files and
// has fsynced the current segment.
func (w *WAL) cut(first uint64) error {
	d := &w.disk
	if d.dirty {
		// The caller must have synced: cutting past unsynced writes would
		// let a later fsync acknowledge records that are not durable.
		return errors.New("cut segment: current segment has unsynced writes")
	}
	seq := uint64(1)
	if n := len(d.segs); n > 0 {
		seq = d.segs[n-1].seq + 1
	}
	if err := w.trimCurrent(); err != nil {
		return fmt.Errorf("cut segment: %w", err)
	}
	seg := segment{seq: seq, first: first, name: segmentName(seq, first)}
	var head []byte // the sync block is prepended by createSegment
	for _, t := range w.opts.HeaderTypes {
		if enc, ok := d.headers[t]; ok {
			head = append(head, enc...)
			seg.records++
		}
	}
	f, err := w.createSegment(seg.name, head)
	if err != nil {
		return fmt.Errorf("cut segment: %w", err)
	}
	if d.file != nil {
		if err := d.file.Close(); err != nil {
			f.Close()
			return fmt.Errorf("close segment %s: %w", w.path(d.segs[len(d.segs)-1].name), err)
		}
	}
	seg.size = SyncBlockBytes + int64(len(head))
	d.segs = append(d.segs, seg)
	d.file = f
	w.log.Info("wal segment cut", "dir", w.dir, "segment", seg.name, "header_bytes", len(head))
	return nil
}

// trimCurrent truncates the current segment, if any, to its records and
// makes that durable (unless NoSync): before a cut makes it a segment that
// is not the last (whose preallocated tail replay would take for damage),
// at Close, and when replay cut a torn tail off it.
func (w *WAL) trimCurrent() error {
	d := &w.disk
	if d.file == nil {
		return nil
	}
	cur := d.segs[len(d.segs)-1]
	if err := d.file.Truncate(cur.size); err != nil {
		return fmt.Errorf("truncate %s to %d bytes: %w", w.path(cur.name), cur.size, err)
	}
	if w.opts.NoSync {
		return nil
	}
	if err := writeSyncBlock(d.file, cur.size); err != nil {
		return err
	}
	if err := w.syncFile(d.file); err != nil {
		return fmt.Errorf("fsync %s after truncation: %w", w.path(cur.name), err)
	}
	d.syncs++
	return nil
}

// createSegment durably creates the segment file name holding its sync
// block and head, preallocated, and returns it open for writing after them.
func (w *WAL) createSegment(name string, head []byte) (*os.File, error) {
	tmp := w.path(name + tempExt)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", tmp, err)
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if _, err := f.Write(append(encodeSyncBlock(SyncBlockBytes+int64(len(head))), head...)); err != nil {
		return fail(fmt.Errorf("write %s: %w", tmp, err))
	}
	w.preallocate(f)
	if !w.opts.NoSync {
		if err := w.syncFile(f); err != nil {
			return fail(fmt.Errorf("fsync %s: %w", tmp, err))
		}
		w.disk.syncs++
	}
	if err := os.Rename(tmp, w.path(name)); err != nil {
		return fail(fmt.Errorf("rename %s: %w", tmp, err))
	}
	if err := w.syncNames(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
