package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// PrepareLocalDataDir makes LocalDataDir ready for local mode (see
// prepareLocalDir) and returns it.
func PrepareLocalDataDir() (string, error) {
	dir := LocalDataDir()
	return dir, prepareLocalDir(dir, os.Getuid())
}

// prepareLocalDir creates dir with mode 0700, or checks the dir that is
// there, for a user uid whose chaos, perhaps as root, will signal the
// processes its pidfiles name and write its files. The directory lies in
// /tmp, where anyone can create it first and plant pidfiles and links, so
// it is refused, with an error saying how to fix it, when it is a symlink,
// is not a directory, belongs to another user, or is writable by group or
// others. A directory of uid's that others may only read (older versions
// made it 0755) is tightened to 0700: nobody else could write into it.
func prepareLocalDir(dir string, uid int) error {
	err := os.Mkdir(dir, 0o700)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("local mode's directory %s cannot be created: %w", dir, err)
	}
	fix := fmt.Sprintf("remove it (rm -rf %s) if nobody uses it, or point TMPDIR elsewhere", dir)
	// Opened without following a link, and checked and changed through
	// the descriptor: what is checked is what is used.
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, syscall.ELOOP) || err != nil && isSymlink(dir):
		return fmt.Errorf("local mode's directory %s is a symlink, which someone else may have planted: refused; %s", dir, fix)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("local mode's directory %s is not a directory: refused; %s", dir, fix)
	case err != nil:
		return fmt.Errorf("local mode's directory %s: %w", dir, err)
	}
	defer d.Close()
	info, err := d.Stat()
	if err != nil {
		return fmt.Errorf("local mode's directory %s: %w", dir, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	perm := info.Mode().Perm()
	switch {
	case !ok:
		return fmt.Errorf("local mode's directory %s: its owner cannot be read", dir)
	case int(st.Uid) != uid:
		return fmt.Errorf("local mode's directory %s belongs to uid %d, not to uid %d who runs chaos: another user may have made it to plant pidfiles; refused; %s", dir, st.Uid, uid, fix)
	case perm&0o022 != 0:
		return fmt.Errorf("local mode's directory %s has mode %04o, writable by others who may have planted pidfiles: refused; %s", dir, perm, fix)
	case perm&0o077 != 0:
		if err := d.Chmod(perm & 0o700); err != nil {
			return fmt.Errorf("local mode's directory %s: make it private: %w", dir, err)
		}
	}
	return nil
}

func isSymlink(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode()&fs.ModeSymlink != 0
}
