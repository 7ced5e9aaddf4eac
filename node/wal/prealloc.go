package wal

import (
	"encoding/binary"
	"os"
)

// Segments are preallocated: the current segment's file is extended to
// Options.SegmentBytes when it is created or reopened, so an append writes
// into space the file system has already allocated and an fdatasync has no
// size change to commit. The space beyond the valid records reads as zero
// bytes, which never decode as a record (type 0 is never written); replay
// takes a zero tail of the last segment for what it is and a cut trims the
// segment it leaves to its records, so only the current segment has one.
// Preallocation is only an optimisation: where it fails (a file system
// without it, a full disk) appends extend the file as they go.

// preallocate extends f to SegmentBytes of allocated space, zero-filled,
// if it is shorter, and logs why it could not.
func (w *WAL) preallocate(f *os.File) {
	st, err := f.Stat()
	if err == nil && st.Size() < w.opts.SegmentBytes {
		err = allocate(f, w.opts.SegmentBytes)
	}
	if err != nil {
		w.log.Warn("wal segment not preallocated", "file", f.Name(), "err", err)
	}
}

// dataEnd is the offset just past the last non-zero byte of data at or
// after off, or off if there is none: where the preallocated zero tail of
// a segment begins. A record can end in zero bytes but cannot begin in
// them, so no record starts at or after dataEnd.
func dataEnd(data []byte, off int) int {
	end := len(data)
	for end-8 >= off && binary.LittleEndian.Uint64(data[end-8:]) == 0 {
		end -= 8 // a 64 MiB tail takes milliseconds, not tens of them
	}
	for end > off && data[end-1] == 0 {
		end--
	}
	return end
}
