package wal

import "fmt"

// batch is the records of every Save call that arrived while the previous
// write (and fsync) was in progress, and of every Write call since the
// last write; one write, followed by one fsync when a Save is among them,
// covers all of them.
type batch struct {
	buf   []byte
	spans []span
	sync  bool  // some caller waits for the batch to be durable (Save or Sync)
	done  bool  // set, with err, by the goroutine that wrote the batch
	err   error // the outcome shared by every caller in the batch
}

// span locates one encoded record inside batch.buf.
type span struct {
	typ        uint8
	index      uint64
	start, end int
}

// Save appends recs and returns once they are durable (fsynced, unless
// Options.NoSync). The records of one call are contiguous in the log and in
// order. Save copies the records' Data; the caller may reuse it at once.
//
// Group commit: the first caller to find the files idle writes and fsyncs
// its batch; callers that arrive meanwhile join the next pending batch, and
// when the write finishes one of them writes that whole batch with a single
// fsync. If a write or fsync fails, every caller of that batch gets the error
// and the WAL refuses further writes, because after a failed fsync the file
// contents are unknown; reopening recovers what is on disk.
//
// With the LazySync planted bug, Save writes its records but waits for no
// fsync: the planted bug's timer calls Sync.
func (w *WAL) Save(recs ...Record) error { return w.save(!w.opts.Bugs.LazySync, recs) }

// Write queues recs to be appended like Save's, and returns at once: they
// are written with the next Save (in the same write as its records, and
// covered by its fsync), Sync or Close, whichever comes first. Until then
// they are only in memory, so a crash may lose them: a process crash those
// not yet written, a power loss those not yet fsynced (package doc, "Crash
// safety"). It is for records a crash may lose without harm, such as a
// hard state that only moves the commit index, and saves the file system a
// write of their own: under FUSE a request per write. Its error says why
// the WAL takes no records (closed, failed, or not yet read).
func (w *WAL) Write(recs ...Record) error {
	buf, spans, err := encodeAll(recs)
	if err != nil {
		return fmt.Errorf("write to %s: %w", w.dir, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkReadyLocked("write"); err != nil {
		return err
	}
	if len(recs) > 0 {
		w.enqueueLocked(buf, spans)
	}
	return nil
}

// Sync makes every record saved or written so far durable: it writes the
// records Write queued, and fsyncs the current segment if it has unsynced
// writes. Save needs no Sync; the LazySync planted bug's timer does. A
// failed write or fsync fails the WAL as in Save.
func (w *WAL) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkReadyLocked("sync"); err != nil {
		return err
	}
	for w.busy {
		w.changed.Wait()
	}
	b := w.enqueueLocked(nil, nil) // the queued records, or none
	b.sync = true
	w.flushLocked(b)
	return b.err
}

// save appends recs with group commit, and waits for them to be durable
// when sync (Save; with LazySync, only written).
func (w *WAL) save(sync bool, recs []Record) error {
	buf, spans, err := encodeAll(recs)
	if err != nil {
		return fmt.Errorf("save to %s: %w", w.dir, err)
	}
	w.mu.Lock()
	if err := w.checkReadyLocked("save"); err != nil {
		w.mu.Unlock()
		return err
	}
	if len(recs) == 0 {
		w.mu.Unlock()
		return nil
	}
	b := w.enqueueLocked(buf, spans)
	b.sync = b.sync || sync
	for !b.done && w.busy {
		w.changed.Wait()
	}
	if !b.done {
		w.flushLocked(b)
	}
	err = b.err
	w.mu.Unlock()
	return err
}

// flushLocked writes the pending batch b while owning the files, with mu
// released during the I/O, and marks it done. mu must be held, the files
// idle and b not yet written: then b is still w.pending, because only the
// owner of the files takes the pending batch and it marks that batch done
// before it gives up ownership.
func (w *WAL) flushLocked(b *batch) {
	w.busy = true
	w.pending = nil
	err := w.failed
	w.mu.Unlock()

	if err == nil {
		err = w.writeBatch(b)
	}

	w.mu.Lock()
	if err != nil && w.failed == nil {
		w.failed = err
	}
	b.done, b.err = true, err
	if err == nil {
		w.stats.Records += uint64(len(b.spans))
	}
	w.releaseLocked()
}

// encodeAll validates and encodes recs outside any lock.
func encodeAll(recs []Record) ([]byte, []span, error) {
	size := 0
	for _, r := range recs {
		if err := validateRecord(r); err != nil {
			return nil, nil, err
		}
		size += encodedSize(r)
	}
	buf := make([]byte, 0, size)
	spans := make([]span, len(recs))
	for i, r := range recs {
		start := len(buf)
		buf = encodeRecord(buf, r)
		spans[i] = span{typ: r.Type, index: r.Index, start: start, end: len(buf)}
	}
	return buf, spans, nil
}

// enqueueLocked adds encoded records to the pending batch and returns it.
func (w *WAL) enqueueLocked(buf []byte, spans []span) *batch {
	b := w.pending
	if b == nil {
		b = &batch{}
		w.pending = b
	}
	base := len(b.buf)
	b.buf = append(b.buf, buf...)
	for _, s := range spans {
		s.start += base
		s.end += base
		b.spans = append(b.spans, s)
	}
	return b
}

// writeBatch writes b to the current segment, cutting new segments as they
// fill up, and fsyncs. The caller owns the files.
func (w *WAL) writeBatch(b *batch) error {
	d := &w.disk
	written := 0 // b.buf[:written] is in the files
	for _, s := range b.spans {
		cur := &d.segs[len(d.segs)-1]
		unwritten := int64(s.start - written)
		if cur.records > 0 && cur.size+unwritten >= w.opts.SegmentBytes {
			if err := w.writeAndSync(b.buf[written:s.start], true); err != nil {
				return err
			}
			written = s.start
			if err := w.cut(s.index); err != nil {
				return err
			}
			cur = &d.segs[len(d.segs)-1]
		}
		cur.records++
		w.account(cur, s.typ, s.index, b.buf[s.start:s.end])
	}
	return w.writeAndSync(b.buf[written:], b.sync)
}

// account records that the encoded record enc of type typ and index index
// belongs to seg: it may raise seg.maxIndex or become the latest header.
func (w *WAL) account(seg *segment, typ uint8, index uint64, enc []byte) {
	if w.isHead[typ] {
		w.disk.headers[typ] = append(w.disk.headers[typ][:0], enc...)
		return
	}
	seg.maxIndex = max(seg.maxIndex, index)
}

// writeAndSync appends p to the current segment and, when sync, fsyncs it
// if anything is unsynced, its sync block saying where its records end.
func (w *WAL) writeAndSync(p []byte, sync bool) error {
	d := &w.disk
	cur := &d.segs[len(d.segs)-1]
	if len(p) > 0 {
		n, err := d.file.Write(p)
		cur.size += int64(n)
		d.dirty = true
		if err != nil {
			return fmt.Errorf("write %s: %w", w.path(cur.name), err)
		}
	}
	if w.opts.NoSync {
		d.dirty = false
		return nil
	}
	if !sync || !d.dirty {
		return nil
	}
	if err := writeSyncBlock(d.file, cur.size); err != nil {
		return err
	}
	if err := w.syncFile(d.file); err != nil {
		return fmt.Errorf("fsync %s: %w", w.path(cur.name), err)
	}
	d.dirty = false
	d.syncs++
	return nil
}
