package wal

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// RecoveryInfo describes what ReadAll found.
type RecoveryInfo struct {
	Segments int // segment files replayed
	Records  int // records returned
	// TruncatedSegment names the last segment when a torn tail was cut off
	// it, and is "" otherwise. TruncatedOffset is where its valid records
	// end and TruncatedBytes how many bytes of damage followed them (up to
	// the last non-zero byte: zero bytes after it were preallocated).
	TruncatedSegment string
	TruncatedOffset  int64
	TruncatedBytes   int64
	// Lost says that records this WAL had fsynced are gone (see
	// syncblock.go), found by this replay or by an earlier one whose owner
	// has not called CaughtUp since; LostReason says how it was found. A
	// Raft node must then neither vote nor campaign until a leader has
	// caught it up: it may have acknowledged entries, or voted, in what
	// it lost.
	Lost       bool
	LostReason string
}

// ReadAll replays every record in log order and readies the WAL for Save.
// It must be called after Open and before anything else, and may be called
// again only if it failed. Each record's CRC32C is
// verified. Zero bytes after the last record of the last segment are its
// preallocated space (see prealloc.go), kept for the next writes. Damage
// at the end of the last segment (a partial or bad record with no valid
// record after it) is a torn write from a crash: it is truncated away,
// logged and reported in RecoveryInfo. What ReadAll returns is durable
// when it returns: it fsyncs the last segment (which a killed process may
// have left unsynced) and the directory. Any other bad
// record fails with an error wrapping ErrCorrupt that names the file and the
// byte offset; nothing is truncated then.
//
// Header records appear at the head of every segment and again wherever they
// were saved, so the latest one of each type is the last one returned.
func (w *WAL) ReadAll() ([]Record, RecoveryInfo, error) {
	w.mu.Lock()
	switch w.state {
	case stateClosing, stateClosed:
		w.mu.Unlock()
		return nil, RecoveryInfo{}, fmt.Errorf("read wal %s: %w", w.dir, ErrClosed)
	case stateReady:
		w.mu.Unlock()
		return nil, RecoveryInfo{}, fmt.Errorf("read wal %s: ReadAll was already called", w.dir)
	}
	w.acquireLocked()
	w.mu.Unlock()

	recs, info, err := w.replay()

	w.mu.Lock()
	if err == nil {
		w.state = stateReady
	}
	w.releaseLocked()
	w.mu.Unlock()
	if err != nil {
		return nil, RecoveryInfo{}, fmt.Errorf("read wal %s: %w", w.dir, err)
	}
	return recs, info, nil
}

// replay reads every segment, truncates a torn tail and opens the last
// segment for writing. The caller owns the files.
func (w *WAL) replay() ([]Record, RecoveryInfo, error) {
	w.disk = disk{headers: make(map[uint8][]byte), syncs: w.disk.syncs}
	segs, temps, err := listSegments(w.dir)
	if err != nil {
		return nil, RecoveryInfo{}, err
	}
	if err := w.removeTemps(temps); err != nil {
		return nil, RecoveryInfo{}, err
	}
	if len(segs) == 0 {
		return nil, RecoveryInfo{}, w.cut(0)
	}
	var recs []Record
	var info RecoveryInfo
	for i := range segs {
		last := i == len(segs)-1
		got, tornAt, synced, err := w.replaySegment(&segs[i], last)
		if err != nil {
			return nil, RecoveryInfo{}, err
		}
		recs = append(recs, got...)
		if tornAt >= 0 {
			info.TruncatedSegment = segs[i].name
			info.TruncatedOffset = segs[i].size
			info.TruncatedBytes = tornAt
		}
		if last {
			info.LostReason = lostReason(w.path(segs[i].name), segs[i].size, synced)
		}
	}
	info.Segments, info.Records = len(segs), len(recs)
	w.disk.segs = segs
	if err := w.noteLoss(&info); err != nil {
		return nil, RecoveryInfo{}, err
	}
	if err := w.openLast(info.TruncatedBytes > 0); err != nil {
		return nil, RecoveryInfo{}, err
	}
	if info.TruncatedBytes > 0 {
		w.log.Warn("wal torn tail truncated", "dir", w.dir, "segment", info.TruncatedSegment,
			"offset", info.TruncatedOffset, "bytes", info.TruncatedBytes)
	}
	return recs, info, nil
}

// replaySegment decodes the segment seg, fills in its size, maxIndex and
// record count and updates the latest header records. tornBytes is the
// length of the torn tail found after seg.size, or -1 if there is none;
// synced is where its sync block says its records ended at its last
// fsync, or an error wrapping errSyncBlock. A segment that is not the
// last must hold every record it had synced: ErrCorrupt otherwise.
func (w *WAL) replaySegment(seg *segment, last bool) (recs []Record, tornBytes int64, synced syncedEnd, err error) {
	path := w.path(seg.name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, synced, fmt.Errorf("read segment: %w", err)
	}
	synced.end, synced.err = decodeSyncBlock(data)
	off, end := SyncBlockBytes, dataEnd(data, min(SyncBlockBytes, len(data)))
	for off < len(data) {
		r, n, err := decodeRecord(data[off:])
		if errors.Is(err, errChecksum) && w.opts.Bugs.TrustCorrupt {
			r, n, err = decodeUnchecked(data[off:])
		}
		if err != nil && last && end <= off {
			w.noteZeroTail(path, off, len(data))
			break // the preallocated space after the last record
		}
		if err != nil {
			if cerr := checkTail(path, data, off, err, last); cerr != nil {
				return nil, 0, synced, cerr
			}
			break
		}
		w.account(seg, r.Type, r.Index, data[off:off+n])
		seg.records++
		r.Data = append([]byte(nil), r.Data...)
		recs = append(recs, r)
		off += n
	}
	seg.size = int64(off)
	if reason := lostReason(path, seg.size, synced); !last && reason != "" {
		return nil, 0, synced, fmt.Errorf("%s, in a segment that is not the last: %w", reason, ErrCorrupt)
	}
	if end > off {
		return recs, int64(end - off), synced, nil
	}
	return recs, -1, synced, nil
}

// noteZeroTail logs zero bytes after the last record of a segment that is
// not of the size this WAL preallocates: not its own preallocation, but
// (say) a file that grew before its data reached the disk. They are taken
// for empty space all the same; the log says they were there.
func (w *WAL) noteZeroTail(path string, off, size int) {
	if int64(size) != w.opts.SegmentBytes {
		w.log.Warn("wal zero bytes after the last record", "segment", path, "offset", off, "bytes", size-off)
	}
}

// checkTail decides whether the bad record at data[off:], which failed to
// decode with cause, is a torn tail (nil) or corruption (ErrCorrupt naming
// path and off). It is a torn tail only in the last segment and only if no
// valid record starts anywhere after off.
func checkTail(path string, data []byte, off int, cause error, last bool) error {
	if !last {
		return fmt.Errorf("%s: bad record at byte offset %d (%w) in a segment that is not the last: %w",
			path, off, cause, ErrCorrupt)
	}
	for p, end := off+1, dataEnd(data, off); p < end && p+recordHeaderBytes <= len(data); p++ { // no record starts in zeros
		if _, _, err := decodeRecord(data[p:]); err == nil {
			return fmt.Errorf("%s: bad record at byte offset %d (%w) followed by a valid record at byte offset %d: %w",
				path, off, cause, p, ErrCorrupt)
		}
	}
	return nil
}

// removeTemps deletes segment files left half-made by a crash during cut.
func (w *WAL) removeTemps(temps []string) error {
	for _, name := range temps {
		if err := os.Remove(w.path(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove unfinished segment: %w", err)
		}
		w.log.Warn("wal removed unfinished segment", "dir", w.dir, "file", name)
	}
	if len(temps) == 0 {
		return nil
	}
	return w.syncNames()
}

// syncRecovered makes the last segment f, at path, durable as replay read
// it, with the directory's names: a process killed between a write and
// its fsync (or a segment's rename and the directory's fsync) leaves
// records in the page cache that replay returns and the caller may act
// on (a node acknowledges them); its sync block then counts them. Earlier
// segments were fsynced before their cut.
func (w *WAL) syncRecovered(f *os.File, path string, size int64) error {
	if w.opts.NoSync {
		return nil
	}
	if err := writeSyncBlock(f, size); err != nil {
		return err
	}
	if err := w.syncFile(f); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	w.disk.syncs++
	return w.syncNames()
}

// openLast opens the last segment for writing after its valid records,
// truncating away whatever follows them if truncate is set (trimCurrent),
// and preallocates it.
func (w *WAL) openLast(truncate bool) error {
	seg := w.disk.segs[len(w.disk.segs)-1]
	path := w.path(seg.name)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open segment for writing: %w", err)
	}
	w.disk.file = f
	fail := func(err error) error {
		f.Close()
		w.disk.file = nil
		return err
	}
	if truncate {
		if err := w.trimCurrent(); err != nil {
			return fail(err)
		}
	} else if err := w.syncRecovered(f, path, seg.size); err != nil {
		return fail(err)
	}
	w.preallocate(f)
	if _, err := f.Seek(seg.size, io.SeekStart); err != nil {
		return fail(fmt.Errorf("seek %s to %d: %w", path, seg.size, err))
	}
	return nil
}
