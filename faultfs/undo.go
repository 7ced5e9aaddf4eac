package faultfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// DefaultUndoMemory is the default bound on the old bytes a file system
// keeps in memory (Options.UndoMemory): 64 MiB.
const DefaultUndoMemory = 64 << 20

// spillChunk is the most bytes copied at once to or from a spill file.
const spillChunk = 1 << 20

// undoStore is where a Tracker keeps the old bytes it saves, and what it
// counts of them. Invariants (under the Tracker's lock): mem is the sum of
// the bytes of every file's runs in memory and never exceeds limit;
// spilled is the sum of the bytes of every file's spilled runs. The old
// bytes of a range that would take mem past limit go to the file's spill
// file instead, whole; a change whose old bytes can be neither read nor
// spilled is refused (with ENOSPC when the backing store is full, else
// EIO), changing nothing, and counted in refused.
//
// A spill file is made in dir (the trash: in the backing store, hidden
// from the mount) and unlinked at once, so that it holds space only while
// its descriptor is open: until the file's change is durable or undone,
// or the file system ends, however it ends.
type undoStore struct {
	dir     string
	limit   int64
	mem     int64
	spilled int64
	refused int64
}

// keep saves the old bytes [off, off+n) of the file st is open on, which
// are durable and not saved yet, in memory or, past u's bound, in the
// file's spill file, and returns their run. Bytes past the file's end (a
// file cut shorter than its durable size and cut again) are saved as
// zeros: they are zeros once the durable size is given back.
func (st *fileState) keep(off, n int64, u *undoStore) (extent, error) {
	if u.mem+n <= u.limit {
		buf := make([]byte, n)
		if err := readOld(st.fd, buf, off); err != nil {
			return extent{}, err
		}
		u.mem += n
		return extent{off: off, n: n, data: buf}, nil
	}
	if st.spill == nil {
		f, err := os.CreateTemp(u.dir, "undo-")
		if err != nil {
			return extent{}, spillErr(err)
		}
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			return extent{}, spillErr(err)
		}
		st.spill = f
	}
	at := st.spillEnd
	buf := make([]byte, min(n, spillChunk))
	for i := int64(0); i < n; i += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), n-i)]
		if err := readOld(st.fd, b, off+i); err != nil {
			return extent{}, err
		}
		if _, err := st.spill.WriteAt(b, at+i); err != nil {
			return extent{}, spillErr(err)
		}
	}
	st.spillEnd += n
	u.spilled += n
	return extent{off: off, n: n, spilled: true, at: at}, nil
}

// spillErr is the error a change is refused with when its old bytes could
// not be spilled (err): ENOSPC when the backing store is full, else EIO.
func spillErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return syscall.ENOSPC
	}
	return syscall.EIO
}

// readOld reads the bytes of f at off into buf, zeros past f's end.
func readOld(f *os.File, buf []byte, off int64) error {
	n, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return fmt.Errorf("save old bytes: %w", err)
	}
	clear(buf[n:])
	return nil
}

// drop forgets st's saved bytes (the change is durable or undone), and
// its spill file with them.
func (st *fileState) drop(u *undoStore) {
	_, inMemory, spilled := st.undo.bytes()
	u.mem -= inMemory
	u.spilled -= spilled
	st.undo = nil
	if st.spill != nil {
		st.spill.Close()
		st.spill, st.spillEnd = nil, 0
	}
}

// putBack writes e's saved bytes back to the file st is open on.
func (st *fileState) putBack(e extent) error {
	if e.inMemory() {
		_, err := st.fd.WriteAt(e.data, e.off)
		return err
	}
	buf := make([]byte, min(e.n, spillChunk))
	for i := int64(0); i < e.n; i += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), e.n-i)]
		if e.spilled {
			if _, err := st.spill.ReadAt(b, e.at+i); err != nil {
				return fmt.Errorf("read spilled bytes: %w", err)
			}
		}
		if _, err := st.fd.WriteAt(b, e.off+i); err != nil {
			return err
		}
	}
	return nil
}
