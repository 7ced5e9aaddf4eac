package wal

import (
	"errors"
	"os"
	"syscall"
)

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

// allocate extends f to size bytes of allocated, zero-filled space
// (fallocate(2)); a file system that cannot is no error.
func allocate(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return nil
	}
	return err
}
