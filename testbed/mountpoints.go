package testbed

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// makeMountPoints creates the targets of privateDirs that the machine lacks,
// parents first, and records each in the state file right after creating it.
func makeMountPoints(dir string, sys System, st *State) error {
	for _, p := range privateDirs() {
		for _, d := range ancestry(p.Target) {
			err := sys.Mkdir(d)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("make mount point %s: %w", d, err)
			}
			st.MadeDirs = append(st.MadeDirs, d)
			if err := saveState(dir, *st); err != nil {
				return err
			}
		}
	}
	return nil
}

// ancestry lists an absolute path's directories from the first below / to
// the path itself: /var/lib/chaos gives /var, /var/lib, /var/lib/chaos.
func ancestry(path string) []string {
	var dirs []string
	for d := filepath.Clean(path); d != "/" && d != "."; d = filepath.Dir(d) {
		dirs = append(dirs, d)
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// removeMountPoints removes the directories Up created, children first,
// unless another testbed's hosts are still up: they mount over the same
// directories, and removing a mount point that is in use in another mount
// namespace unmounts it there. A directory someone has since put files in
// stays.
func removeMountPoints(sys System, st State, netns map[string]bool) error {
	for name := range netns {
		if testbedNetns.MatchString(name) && !strings.HasPrefix(name, st.Prefix+"-") {
			return nil
		}
	}
	var errs []error
	for i := len(st.MadeDirs) - 1; i >= 0; i-- {
		err := sys.Remove(st.MadeDirs[i])
		if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			continue
		}
		errs = append(errs, fmt.Errorf("remove mount point %s: %w", st.MadeDirs[i], err))
	}
	return errors.Join(errs...)
}
