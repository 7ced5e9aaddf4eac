package faultfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// TrashName is the directory, at the backing store's root, where the
// file system keeps what a power loss may bring back: a hard link to each
// file whose durable name was removed or replaced, and each removed
// directory. It is hidden from the mount and emptied when nothing refers
// to its entries any more.
const TrashName = ".faultfs-trash"

// binding is what a name refers to: nothing, a directory, or another
// object (a file, a symbolic link, a device...), by inode number.
type binding struct {
	kind bindKind
	ino  uint64
}

type bindKind int

const (
	bindNone bindKind = iota
	bindDir
	bindFile
)

// bindingAt is what path refers to now.
func bindingAt(path string) (binding, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return binding{}, nil
		}
		return binding{}, err
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return binding{kind: bindDir, ino: st.Ino}, nil
	}
	return binding{kind: bindFile, ino: st.Ino}, nil
}

// slot is one name of one directory: a directory's inode number and a
// name in it.
type slot struct {
	dir  uint64
	name string
}

// names are the name changes not yet durable: for each name changed
// since its directory was last fsynced, what it referred to then (the
// first change keeps it; later ones do not change what a power loss
// gives back). refs counts, per trash entry, the changes that refer to it.
type names struct {
	root, trash string
	durable     map[slot]binding
	refs        map[uint64]int
}

func newNames(root string) *names {
	return &names{root: root, trash: filepath.Join(root, TrashName),
		durable: map[slot]binding{}, refs: map[uint64]int{}}
}

func (ns *names) trashPath(ino uint64) string {
	return filepath.Join(ns.trash, strconv.FormatUint(ino, 10))
}

// change runs op, which changes the names of paths (each a full backing
// path), and remembers what each referred to before if it is the first
// change since its directory was fsynced. A file a name referred to gets
// a hard link in the trash first, so that a power loss can bring it back
// however op removes it. A directory that op removes must be moved to
// the trash by op itself (see removeDir).
func (ns *names) change(paths []string, op func() error) error {
	type pending struct {
		path string
		s    slot
		b    binding
	}
	var news []pending
	for _, p := range paths {
		dir, err := bindingAt(filepath.Dir(p))
		if err != nil {
			return err
		}
		s := slot{dir: dir.ino, name: filepath.Base(p)}
		if _, ok := ns.durable[s]; ok {
			continue
		}
		b, err := bindingAt(p)
		if err != nil {
			return err
		}
		news = append(news, pending{p, s, b})
	}
	for _, n := range news {
		if n.b.kind == bindFile {
			if err := ns.keep(n.path, n.b.ino); err != nil {
				return err
			}
		}
	}
	err := op()
	for _, n := range news {
		if err != nil {
			ns.release(n.b)
			continue
		}
		ns.durable[n.s] = n.b
		if n.b.kind == bindDir {
			ns.refs[n.b.ino]++
		}
	}
	return err
}

// keep makes sure the trash holds a link to the file ino at path, and
// counts one more reference to it.
func (ns *names) keep(path string, ino uint64) error {
	if ns.refs[ino] == 0 {
		if err := os.Link(path, ns.trashPath(ino)); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("keep %s in the trash: %w", path, err)
		}
	}
	ns.refs[ino]++
	return nil
}

// release drops one reference to what b refers to, and its trash entry
// with the last one.
func (ns *names) release(b binding) {
	if b.kind == bindNone {
		return
	}
	ns.refs[b.ino]--
	if ns.refs[b.ino] > 0 {
		return
	}
	delete(ns.refs, b.ino)
	_ = os.RemoveAll(ns.trashPath(b.ino))
}

// removeDir removes the empty directory at path as rmdir(2) would, by
// moving it to the trash.
func (ns *names) removeDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	some, err := d.Readdirnames(1)
	d.Close()
	if len(some) > 0 {
		return syscall.ENOTEMPTY
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	b, err := bindingAt(path)
	if err != nil {
		return err
	}
	if b.kind != bindDir {
		return syscall.ENOTDIR
	}
	return os.Rename(path, ns.trashPath(b.ino))
}

// synced makes the names of directory dir durable.
func (ns *names) synced(dir uint64) {
	for s, b := range ns.durable {
		if s.dir == dir {
			delete(ns.durable, s)
			ns.release(b)
		}
	}
}

// syncedAll makes every name durable (NamesOrdered's journal commit).
func (ns *names) syncedAll() {
	for s, b := range ns.durable {
		delete(ns.durable, s)
		ns.release(b)
	}
}

// pending is how many names are not durable.
func (ns *names) pending() int { return len(ns.durable) }

// renameOver renames from to to as rename(2) does; an empty directory at
// to that the rename replaces goes to the trash first (and comes back if
// the rename fails).
func (ns *names) renameOver(from, to string) error {
	src, err := bindingAt(from)
	if err != nil {
		return err
	}
	dst, err := bindingAt(to)
	if err != nil {
		return err
	}
	if src.kind != bindDir || dst.kind != bindDir || src.ino == dst.ino {
		return os.Rename(from, to)
	}
	if err := ns.removeDir(to); err != nil {
		return err
	}
	if err := os.Rename(from, to); err != nil {
		_ = os.Rename(ns.trashPath(dst.ino), to)
		return err
	}
	return nil
}
