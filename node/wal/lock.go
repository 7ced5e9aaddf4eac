package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

const lockFileName = "LOCK"

// lockDir takes an exclusive, non-blocking flock on dir/LOCK and returns the
// open lock file; closing it releases the lock. flock locks belong to the open
// file description, so a second lockDir on the same dir fails whether it comes
// from this process or another one, and the kernel releases the lock when the
// holder dies, even by SIGKILL.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s: another process holds it: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("flock %s: %w", path, err)
	}
	return f, nil
}
