package faultfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FS is a mounted fault file system: the mount and its Tracker.
type FS struct {
	*Tracker
	server *fuse.Server
	done   chan struct{}
}

// DevFUSE is the device a mount needs.
const DevFUSE = "/dev/fuse"

// Mount mounts the backing directory at mountpoint (an empty directory),
// directly (no fusermount: the caller must be root), and serves it until
// Unmount. What backing holds now is durable. The kernel caches no names
// (every lookup reaches the file system) and a file's attributes for a
// second (a write with O_APPEND needs no request for the size), and a
// power loss drops the attributes and pages it cached. now is the clock of
// timed error injection (nil: time.Now). Its errors name what is wrong
// with the arguments or the host. opts are the file system's choices (its
// names model, its bound on undo memory).
func Mount(backing, mountpoint string, now func() time.Time, opts Options) (*FS, error) {
	if now == nil {
		now = time.Now
	}
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("faultfs: %w", err)
	}
	if err := checkMount(DevFUSE, backing, mountpoint); err != nil {
		return nil, err
	}
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	t, err := NewTracker(backing, now, opts)
	if err != nil {
		return nil, fmt.Errorf("faultfs: backing directory %s: %w", backing, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("faultfs: backing directory %s: %w", backing, err)
	}
	root := &fs.LoopbackRoot{Path: backing, Dev: st.Dev}
	root.NewNode = func(rd *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: rd}, t: t}
	}
	root.RootNode = root.NewNode(root, nil, "", &st)
	zero, attrs := time.Duration(0), time.Second
	server, err := fs.Mount(mountpoint, root.RootNode, &fs.Options{
		EntryTimeout: &zero, AttrTimeout: &attrs, NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			DirectMount: true, DirectMountStrict: true, AllowOther: true,
			FsName: backing, Name: "faultfs", Options: []string{"default_permissions"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("faultfs: mount %s on %s: %w", backing, mountpoint, err)
	}
	f := &FS{Tracker: t, server: server, done: make(chan struct{})}
	t.afterPowerLoss = func() { forgetCaches(root.RootNode.EmbeddedInode()) }
	go func() { server.Wait(); close(f.done) }()
	return f, nil
}

// Done is closed when the file system is no longer served: unmounted by
// Unmount or from outside.
func (f *FS) Done() <-chan struct{} { return f.done }

// checkMount says, in one line, what keeps backing from being mounted at
// mountpoint with the FUSE device dev.
func checkMount(dev, backing, mountpoint string) error {
	if _, err := os.Stat(dev); err != nil {
		return fmt.Errorf("faultfs: %s is missing (load the fuse module, or give the container the device)", dev)
	}
	if fi, err := os.Stat(backing); err != nil || !fi.IsDir() {
		return fmt.Errorf("faultfs: backing directory %s does not exist or is not a directory (create it first)", backing)
	}
	d, err := os.Open(mountpoint)
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return fmt.Errorf("faultfs: mount directory %s is a dead FUSE mount (its server died): unmount it first (umount -l %s)", mountpoint, mountpoint)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("faultfs: mount directory %s does not exist (create it first)", mountpoint)
	case err != nil:
		return fmt.Errorf("faultfs: mount directory %s: %w", mountpoint, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("faultfs: mount directory %s is not a directory", mountpoint)
	case len(names) > 0:
		return fmt.Errorf("faultfs: mount directory %s is not empty (is something mounted there already?)", mountpoint)
	case err != nil && !errors.Is(err, io.EOF):
		return fmt.Errorf("faultfs: mount directory %s: %w", mountpoint, err)
	}
	return nil
}

// Unmount unmounts the file system (it fails while a file of it is open)
// and waits until it is no longer served.
func (f *FS) Unmount() error {
	if err := f.server.Unmount(); err != nil {
		return err
	}
	<-f.done
	return nil
}

// forgetCaches makes the kernel drop the attributes and cached pages of
// the inode n and of every inode below it.
func forgetCaches(n *fs.Inode) {
	n.NotifyContent(0, 0)
	for _, c := range n.Children() {
		forgetCaches(c)
	}
}
