package faultfs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is a file or directory of the mount: go-fuse's loopback node,
// whose every change of names or data goes through the Tracker.
type node struct {
	fs.LoopbackNode
	t *Tracker
}

var (
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
	_ fs.NodeReaddirer      = (*node)(nil)
)

// path is the node's path in the backing store.
func (n *node) path() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// hidden says whether name, in this directory, is the trash.
func (n *node) hidden(name string) bool {
	return name == TrashName && n.EmbeddedInode() == n.Root()
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.ENOENT
	}
	return n.LoopbackNode.Lookup(ctx, name, out)
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (ch *fs.Inode, fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	if n.hidden(name) {
		return nil, nil, 0, syscall.EPERM
	}
	p := filepath.Join(n.path(), name)
	var existed bool
	errno = n.t.nameChange([]string{p}, func() error {
		b, err := bindingAt(p)
		if err != nil {
			return err
		}
		existed = b.kind != bindNone
		var lfh fs.FileHandle
		ch, lfh, fuseFlags, errno = n.LoopbackNode.Create(ctx, name, flags&^syscall.O_TRUNC, mode, out)
		if errno != 0 {
			return errno
		}
		fh, errno = n.wrap(lfh)
		return errnoErr(errno)
	})
	if errno == 0 && existed && flags&syscall.O_TRUNC != 0 {
		if errno = fh.(*file).truncate(ctx, 0); errno != 0 {
			fh.(*file).Release(ctx)
			return nil, nil, 0, errno
		}
	}
	return ch, fh, fuseFlags, errno
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	lfh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags&^syscall.O_TRUNC)
	if errno != 0 {
		return nil, 0, errno
	}
	fh, errno := n.wrap(lfh)
	if errno == 0 && flags&syscall.O_TRUNC != 0 {
		if errno = fh.(*file).truncate(ctx, 0); errno != 0 {
			fh.(*file).Release(ctx)
			return nil, 0, errno
		}
	}
	return fh, fuseFlags, errno
}

// wrap makes a handle of the mount from go-fuse's loopback handle.
func (n *node) wrap(lfh fs.FileHandle) (fs.FileHandle, syscall.Errno) {
	lf := lfh.(*fs.LoopbackFile)
	fd, _ := lf.PassthroughFd()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		lf.Release(context.Background())
		return nil, fs.ToErrno(err)
	}
	n.t.open.Add(1)
	return &file{lf: lf, fd: fd, ino: st.Ino, t: n.t}, 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EPERM
	}
	return ch, n.t.nameChange([]string{filepath.Join(n.path(), name)}, func() error {
		ch, errno = n.LoopbackNode.Mkdir(ctx, name, mode, out)
		return errnoErr(errno)
	})
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EPERM
	}
	return ch, n.t.nameChange([]string{filepath.Join(n.path(), name)}, func() error {
		ch, errno = n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
		return errnoErr(errno)
	})
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EPERM
	}
	return ch, n.t.nameChange([]string{filepath.Join(n.path(), name)}, func() error {
		ch, errno = n.LoopbackNode.Symlink(ctx, target, name, out)
		return errnoErr(errno)
	})
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EPERM
	}
	return ch, n.t.nameChange([]string{filepath.Join(n.path(), name)}, func() error {
		ch, errno = n.LoopbackNode.Link(ctx, target, name, out)
		return errnoErr(errno)
	})
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if n.hidden(name) {
		return syscall.ENOENT
	}
	p := filepath.Join(n.path(), name)
	return n.t.nameRemoval([]string{p}, func() error { return syscall.Unlink(p) })
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if n.hidden(name) {
		return syscall.ENOENT
	}
	p := filepath.Join(n.path(), name)
	return n.t.nameRemoval([]string{p}, func() error { return n.t.names.removeDir(p) })
}

// Rename renames as rename(2) does, flags RENAME_NOREPLACE and
// RENAME_EXCHANGE included; a directory it replaces goes to the trash.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if n.hidden(name) || np.hidden(newName) {
		return syscall.EPERM
	}
	if flags&^(unix.RENAME_NOREPLACE|unix.RENAME_EXCHANGE) != 0 {
		return syscall.EINVAL
	}
	p1, p2 := filepath.Join(n.path(), name), filepath.Join(np.path(), newName)
	return n.t.nameChange([]string{p1, p2}, func() error {
		if flags == 0 {
			return n.t.names.renameOver(p1, p2)
		}
		return errnoErr(n.LoopbackNode.Rename(ctx, name, newParent, newName, flags))
	})
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if fh, ok := f.(*file); ok {
		return fh.Setattr(ctx, in, out)
	}
	size, ok := in.GetSize()
	if !ok {
		return n.LoopbackNode.Setattr(ctx, nil, in, out)
	}
	p := n.path()
	b, err := bindingAt(p)
	if err != nil {
		return fs.ToErrno(err)
	}
	open := func() (*os.File, error) { return os.OpenFile(p, os.O_RDWR, 0) }
	return n.t.dataChange(b.ino, open, change{a: int64(size), b: -1, cut: true}, func() syscall.Errno {
		return n.LoopbackNode.Setattr(ctx, nil, in, out)
	})
}

// CopyFileRange is refused (ENOSYS), so that the kernel copies by reads
// and writes, which the Tracker sees.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, len uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, errno := fs.NewLoopbackDirStream(n.path())
	if errno != 0 {
		return nil, 0, errno
	}
	return &dir{ds: ds, n: n}, 0, 0
}

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	return nil, syscall.ENOSYS // every directory is read through OpendirHandle's handle
}

// errnoErr is errno as an error: nil for 0.
func errnoErr(errno syscall.Errno) error {
	if errno == 0 {
		return nil
	}
	return errno
}

// Tmpfile (O_TMPFILE) is refused: a file with no name that gets one by
// linkat(2) is not tracked.
func (n *node) Tmpfile(ctx context.Context, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// Extended attributes are not supported: Getxattr answers ENOSYS, after
// which the kernel answers EOPNOTSUPP itself and no longer asks (it would
// otherwise ask for security.capability before every write).
func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return syscall.ENOSYS
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return syscall.ENOSYS
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}
