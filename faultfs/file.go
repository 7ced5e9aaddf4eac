package faultfs

import (
	"context"
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// file is an open file of the mount: go-fuse's loopback handle, whose
// writes, truncations, allocations and syncs go through the Tracker. It
// offers no passthrough descriptor, so that the kernel sends every write
// here.
type file struct {
	lf  *fs.LoopbackFile
	fd  int
	ino uint64
	t   *Tracker
}

var (
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileFlusher   = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileGetattrer = (*file)(nil)
	_ fs.FileSetattrer = (*file)(nil)
	_ fs.FileAllocater = (*file)(nil)
	_ fs.FileLseeker   = (*file)(nil)
	_ fs.FileGetlker   = (*file)(nil)
	_ fs.FileSetlker   = (*file)(nil)
	_ fs.FileSetlkwer  = (*file)(nil)
)

// reopen opens the handle's file again for the Tracker (see reopen).
func (f *file) reopen() (*os.File, error) { return reopen(f.fd) }

func (f *file) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return f.lf.Read(ctx, buf, off)
}

// Write writes at off: the kernel gives the offset, the end of the file
// for O_APPEND (go-fuse opens the backing file without O_APPEND).
func (f *file) Write(ctx context.Context, data []byte, off int64) (n uint32, errno syscall.Errno) {
	errno = f.t.dataChange(f.ino, f.reopen, change{a: off, b: off + int64(len(data))}, func() syscall.Errno {
		n, errno = f.lf.Write(ctx, data, off)
		return errno
	})
	return n, errno
}

// Fsync is fsync(2), or fdatasync(2) when flags has FUSE_FSYNC_FDATASYNC
// (msync(MS_SYNC) comes as one too); either makes the whole file durable.
func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return f.t.fileSynced(f.ino, func() error {
		if flags&1 != 0 {
			return syscall.Fdatasync(f.fd)
		}
		return syscall.Fsync(f.fd)
	})
}

func (f *file) Flush(ctx context.Context) syscall.Errno { return f.lf.Flush(ctx) }
func (f *file) Release(ctx context.Context) syscall.Errno {
	f.t.released(f.ino)
	return f.lf.Release(ctx)
}

func (f *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.lf.Getattr(ctx, out)
}

func (f *file) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	size, ok := in.GetSize()
	if !ok {
		return f.lf.Setattr(ctx, in, out)
	}
	return f.t.dataChange(f.ino, f.reopen, change{a: int64(size), b: -1, cut: true}, func() syscall.Errno {
		return f.lf.Setattr(ctx, in, out)
	})
}

// truncate cuts or extends the file to size, as O_TRUNC does.
func (f *file) truncate(ctx context.Context, size int64) syscall.Errno {
	return f.t.dataChange(f.ino, f.reopen, change{a: size, b: -1, cut: true}, func() syscall.Errno {
		return fs.ToErrno(syscall.Ftruncate(f.fd, size))
	})
}

// Allocate is fallocate(2): allocating (with or without
// FALLOC_FL_KEEP_SIZE), punching a hole or zeroing a range. Modes that
// move data (collapse, insert) are refused with EOPNOTSUPP.
func (f *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	const known = unix.FALLOC_FL_KEEP_SIZE | unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_ZERO_RANGE
	if mode&^known != 0 {
		return syscall.EOPNOTSUPP
	}
	a, b := int64(off), int64(off+size)
	if mode&(unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_ZERO_RANGE) == 0 {
		a = b // allocating keeps the bytes there: nothing to save
	}
	return f.t.dataChange(f.ino, f.reopen, change{a: a, b: b}, func() syscall.Errno {
		return f.lf.Allocate(ctx, off, size, mode)
	})
}

func (f *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return f.lf.Lseek(ctx, off, whence)
}

func (f *file) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	return f.lf.Getlk(ctx, owner, lk, flags, out)
}

func (f *file) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.lf.Setlk(ctx, owner, lk, flags)
}

func (f *file) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.lf.Setlkw(ctx, owner, lk, flags)
}
