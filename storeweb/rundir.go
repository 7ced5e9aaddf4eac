package storeweb

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// runDir is a run directory as a listing of thousands of runs looks at
// it. Through the store's root (Store.stat), a stat walks the path from
// the root, opening each directory on the way, and a directory read
// stats every entry: five system calls and more per file, seconds for a
// large store. A listing only needs to know whether a run changed since
// it was read (summaryCache) and whether it has a report, so runDir's
// stat is one lstat by path. A symlink on the way could lead that lstat
// out of the store, so it never decides what is read or served: what is
// read is stat'ed through the store's root first (checkedStat), as every
// page does.
type runDir struct {
	s          *Store
	name, time string
	rel        string // name/time
	abs        string // its path on disk
}

// runDir is the run directory name/t, each a directory's name as a
// directory read gives it (no separator, not "." or ".."), so that its
// paths are joined as they are, without the cleaning of path.Join.
func (s *Store) runDir(name, t string) runDir {
	const sep = string(filepath.Separator)
	return runDir{s: s, name: name, time: t, rel: name + "/" + t, abs: s.dir + sep + name + sep + t}
}

// stat stats the file name of the run directory for a listing: as
// checkedStat does for a file that is not a symlink; a symlink, or a
// stat that fails for another reason than a missing file, is
// checkedStat's.
func (d runDir) stat(name string) (fs.FileInfo, error) {
	st, err := os.Lstat(d.abs + string(filepath.Separator) + name)
	switch {
	case err == nil && st.Mode()&fs.ModeSymlink == 0:
		return st, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return d.checkedStat(name)
}

// checkedStat is Store.stat of the file name of the run directory.
func (d runDir) checkedStat(name string) (fs.FileInfo, error) {
	return d.s.stat(path.Join(d.rel, name))
}

// listDirs lists the directories in the store's directory name, by name,
// as Store.subdirs does, but from the entries' types as the directory
// read gives them, without a stat per entry: name is opened with
// O_NOFOLLOW, so a symlink put in its place is refused rather than
// listed.
func (s *Store) listDirs(name string) ([]string, error) {
	f, err := os.OpenFile(s.abs(name), os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, refusal(inStore(err, name))
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, refusal(inStore(err, name))
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs, nil
}

// inStore names the store path rel in err, a *fs.PathError naming its
// path on disk, as the store's root names its paths.
func inStore(err error, rel string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: rel, Err: pe.Err}
	}
	return err
}
