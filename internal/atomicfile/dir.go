package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SyncDir fsyncs the directory dir so that file creations, renames and
// removals in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s for fsync: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("close dir %s: %w", dir, err)
	}
	return nil
}

// Symlink makes path a symbolic link to target, replacing the link or file
// that path names in one step: the link is made under a temporary name of
// its own (as Create's, never an existing name), renamed over path, and the
// directory fsynced. A crash leaves path as it was or as the new link; an
// error before the rename leaves path untouched and no temporary link.
func Symlink(target, path string) error {
	return symlink(target, path, randomTempName)
}

func symlink(target, path string, names tempNames) error {
	var tmp string
	err := fs.ErrExist
	for i := 0; i < tempTries && errors.Is(err, fs.ErrExist); i++ {
		tmp = names(path)
		err = os.Symlink(target, tmp)
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}
