package wal

import (
	"encoding/binary"
	"errors"
	"os"
	"syscall"
)

// Segments are preallocated: the current segment's file is extended to
// Options.SegmentBytes when it is created or reopened, so an append writes
// into space the file system has already allocated and an fdatasync has no
// size change to commit. The space beyond the valid records reads as zero
// bytes, which never decode as a record (type 0 is never written); replay
// takes a zero tail of the last segment for what it is and a cut trims the
// segment it leaves to its records, so only the current segment has one.

// datasync makes f's data durable with the metadata needed to read it
// back (its size and allocation, not its times): fdatasync(2).
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// preallocate extends f to SegmentBytes of allocated space, zero-filled,
// if it is shorter. A file system that cannot preallocate is no error:
// appends then extend the file as they go.
func (w *WAL) preallocate(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() >= w.opts.SegmentBytes {
		return err
	}
	err = syscall.Fallocate(int(f.Fd()), 0, 0, w.opts.SegmentBytes)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return nil
	}
	return err
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
