package faultfs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dir is an open directory of the mount: go-fuse's loopback directory
// stream, without the trash, whose fsync makes the directory's names
// durable.
type dir struct {
	ds fs.DirStream
	n  *node
}

var (
	_ fs.FileReaddirenter = (*dir)(nil)
	_ fs.FileSeekdirer    = (*dir)(nil)
	_ fs.FileReleasedirer = (*dir)(nil)
	_ fs.FileFsyncdirer   = (*dir)(nil)
)

func (d *dir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	for {
		de, errno := d.ds.(fs.FileReaddirenter).Readdirent(ctx)
		if de == nil || errno != 0 || !d.n.hidden(de.Name) {
			return de, errno
		}
	}
}

func (d *dir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.ds.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dir) Releasedir(ctx context.Context, flags uint32) {
	d.ds.(fs.FileReleasedirer).Releasedir(ctx, flags)
}

// Fsyncdir is fsync(2) of the directory: its names become durable.
func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	p := d.n.path()
	return d.n.t.dirSynced(p, func() error {
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		return syscall.Fsync(fd)
	})
}
