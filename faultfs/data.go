package faultfs

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// fileState is what a power loss must undo in one file (one inode of the
// backing store) since it was last made durable: its durable size and the
// old bytes of the durable range that were overwritten or cut off since.
// A file with no fileState is durable as it is. The file is reached
// through fd, a descriptor of its own (read-write, never O_APPEND), so
// that it can be put back whatever its names became.
type fileState struct {
	fd      *os.File
	durable int64
	undo    extents
}

// openState makes the state of the file that open reaches, just before
// it changes for the first time since it was made durable: its size now
// is its durable size.
func openState(open func() (*os.File, error)) (*fileState, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileState{fd: f, durable: fi.Size()}, nil
}

// save keeps the old bytes of [a, b) that are durable and not saved yet:
// it is called before [a, b) is overwritten, zeroed or cut off.
func (st *fileState) save(a, b int64) error {
	b = min(b, st.durable)
	for _, g := range st.undo.gaps(a, b) {
		buf := make([]byte, g[1]-g[0])
		n, err := st.fd.ReadAt(buf, g[0])
		if err != nil && err != io.EOF {
			return fmt.Errorf("save old bytes: %w", err)
		}
		// Bytes past the file's end (a file cut shorter than its
		// durable size and cut again) read as zeros: they are zeros
		// once the durable size is given back.
		clear(buf[n:])
		st.undo.add(g[0], buf)
	}
	return nil
}

// revert puts the file back to its durable size and content, and closes
// the state's descriptor.
func (st *fileState) revert() error {
	defer st.fd.Close()
	if err := st.fd.Truncate(st.durable); err != nil {
		return err
	}
	for _, e := range st.undo {
		if _, err := st.fd.WriteAt(e.data, e.off); err != nil {
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
