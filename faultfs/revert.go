package faultfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// revert puts every name that is not durable back to what it referred to
// when its directory was last fsynced, then empties the trash: after it,
// everything in the backing store is durable.
//
// It clears every changed name first (a file keeps a link in the trash,
// a directory moves there with what it holds), then gives each name its
// durable object back: a file by a link from the trash, a directory by
// moving it back from wherever it is in the trash. Directories are found
// by inode number when they are needed, so the order does not matter: a
// directory carries its entries wherever it goes. A directory whose
// durable name is not free (it was renamed, and its new name is durable
// too) keeps its new name: a directory has one name.
func (ns *names) revert() error {
	dirs := dirIndex{root: ns.root}
	for s := range ns.durable {
		if err := ns.clearName(&dirs, s); err != nil {
			return err
		}
	}
	for s, b := range ns.durable {
		if err := ns.restoreName(&dirs, s, b); err != nil {
			return err
		}
	}
	clear(ns.durable)
	clear(ns.refs)
	if err := os.RemoveAll(ns.trash); err != nil {
		return fmt.Errorf("empty the trash: %w", err)
	}
	return os.Mkdir(ns.trash, 0o700)
}

// clearName removes what the name s refers to now.
func (ns *names) clearName(dirs *dirIndex, s slot) error {
	dir, ok, err := dirs.path(s.dir)
	if err != nil || !ok {
		return err
	}
	p := filepath.Join(dir, s.name)
	b, err := bindingAt(p)
	switch {
	case err != nil:
		return err
	case b.kind == bindDir:
		dirs.moved()
		return os.Rename(p, ns.trashPath(b.ino))
	case b.kind == bindFile:
		if err := os.Link(p, ns.trashPath(b.ino)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return os.Remove(p)
	}
	return nil
}

// restoreName makes the name s refer to b again.
func (ns *names) restoreName(dirs *dirIndex, s slot, b binding) error {
	dir, ok, err := dirs.path(s.dir)
	if err != nil || !ok || b.kind == bindNone {
		return err
	}
	p := filepath.Join(dir, s.name)
	if b.kind == bindFile {
		if err := os.Link(ns.trashPath(b.ino), p); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("bring back %s: %w", p, err)
		}
		return nil
	}
	from, ok, err := dirs.path(b.ino)
	if err != nil || !ok {
		return err
	}
	if filepath.Dir(from) != ns.trash {
		return nil
	}
	dirs.moved()
	if err := os.Rename(from, p); err != nil && !errors.Is(err, syscall.EEXIST) && !errors.Is(err, syscall.ENOTEMPTY) {
		return fmt.Errorf("bring back %s: %w", p, err)
	}
	return nil
}

// dirIndex finds directories of the backing store (the trash included)
// by inode number, walking the tree again after a directory moved.
type dirIndex struct {
	root  string
	paths map[uint64]string
}

func (d *dirIndex) moved() { d.paths = nil }

// path is where the directory ino is now; ok is false if it is nowhere.
func (d *dirIndex) path(ino uint64) (string, bool, error) {
	if d.paths == nil {
		d.paths = map[uint64]string{}
		err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			d.paths[fi.Sys().(*syscall.Stat_t).Ino] = p
			return nil
		})
		if err != nil {
			return "", false, fmt.Errorf("find directories: %w", err)
		}
	}
	p, ok := d.paths[ino]
	return p, ok, nil
}
