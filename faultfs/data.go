package faultfs

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// fileState is what the Tracker keeps of one file (one inode of the
// backing store) that changed since the file system began: a descriptor
// of its own (read-write, never O_APPEND), so that the file can be put
// back whatever its names became, and what it knows of the file's zeros.
// While the file is pending (changed since it was last made durable) it
// also keeps its durable size and the old bytes of the durable range that
// were overwritten or cut off since, in memory or in its spill file (see
// undoStore). A file with no fileState, or one not pending, is durable as
// it is.
type fileState struct {
	fd      *os.File
	pending bool
	durable int64
	undo    extents
	// spill, when not nil, holds the undo's spilled runs, in its first
	// spillEnd bytes (an unlinked file: see undoStore).
	spill    *os.File
	spillEnd int64
	// zeros is an offset from which every byte of the file, as far as it
	// reaches, is zero: where what was written ends, in a file extended
	// by fallocate(2) or ftruncate(2) (as a write-ahead log preallocates
	// its segments). Its old bytes there are saved as zeros, unread.
	// Nothing past the file's size when the state was made is known.
	zeros int64
}

// change is what a data change may do to a file: change its bytes
// [a, b) (b < 0: up to its durable size), or, when cut, set its size to
// a (which changes no byte before a).
type change struct {
	a, b int64
	cut  bool
}

// openState makes the state of the file that open reaches, just before
// it changes for the first time since it was made durable.
func openState(open func() (*os.File, error)) (*fileState, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	st := &fileState{fd: f}
	if err := st.begin(); err != nil {
		f.Close()
		return nil, err
	}
	st.zeros = st.durable
	return st, nil
}

// begin makes st pending, just before the file's first change since it
// was made durable: its size now is its durable size. It reads the size
// with lseek(2), not fstat(2): a stat that asks for the file's times
// makes the backing file system (one with multigrain timestamps, as
// ext4 and XFS since Linux 6.13) give the next write a fine-grained
// mtime, which dirties the inode, and every fdatasync would then write
// the inode too.
func (st *fileState) begin() error {
	size, err := syscall.Seek(int(st.fd.Fd()), 0, io.SeekEnd)
	if err != nil {
		return err
	}
	st.pending, st.durable = true, size
	return nil
}

// synced makes st durable as the file is: nothing pending.
func (st *fileState) synced(u *undoStore) {
	st.pending = false
	st.drop(u)
}

// changed records what c did to the file's zeros; ok says whether it
// succeeded. A cut that failed, or bytes changed to zeros, only make
// st.zeros claim less than it could.
func (st *fileState) changed(c change, ok bool) {
	switch {
	case c.cut && ok:
		st.zeros = min(st.zeros, c.a)
	case !c.cut && c.a < c.b:
		st.zeros = max(st.zeros, c.b)
	}
}

// save keeps the old bytes of [a, b) that are durable and not saved yet
// (in u: see keep): it is called before [a, b) is overwritten, zeroed or
// cut off. Bytes known to be zeros are not read. If it fails, what it
// saved stays saved: those bytes are still durable and unchanged.
func (st *fileState) save(a, b int64, u *undoStore) error {
	b = min(b, st.durable)
	for _, g := range st.undo.gaps(a, b) {
		if z := max(g[0], st.zeros); z < g[1] {
			st.undo.add(extent{off: z, n: g[1] - z})
			g[1] = z
		}
		if g[0] == g[1] {
			continue
		}
		e, err := st.keep(g[0], g[1]-g[0], u)
		if err != nil {
			return err
		}
		st.undo.add(e)
	}
	return nil
}

// revert puts a pending file back to its durable size and content, and
// closes the state's descriptors; its saved bytes leave u.
func (st *fileState) revert(u *undoStore) error {
	defer st.fd.Close()
	defer st.drop(u)
	if !st.pending {
		return nil
	}
	if err := st.fd.Truncate(st.durable); err != nil {
		return err
	}
	for _, e := range st.undo {
		if err := st.putBack(e); err != nil {
			return err
		}
	}
	return nil
}

// reopen opens the file that fd is open on again, read-write and without
// O_APPEND (a new open file description: the handle's flags stay its own).
func reopen(fd int) (*os.File, error) {
	return os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDWR, 0)
}

// inoOf is the inode number of the file that f is open on.
func inoOf(f *os.File) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
