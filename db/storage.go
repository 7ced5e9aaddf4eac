package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"

	"chaos/control"
	"chaos/faultfs"
)

// Storage faults: with them on, a node's data directory is served through
// chaos's fault file system (package faultfs, run on the node's host as
// `chaos faultfs serve`), which can lose what was not fsynced and make
// writes or fsyncs fail. The file system runs as a daemon of its own in
// the node's directory, started before the node and stopped after it; its
// backing directory sits next to the data directory. The node's logs and
// event log stay outside the mount: the checks read them.

// FaultFS says how the systems serve their nodes' data directories
// through the fault file system: the chaos binary that runs it.
type FaultFS struct {
	// Binary is the chaos binary on this machine (it serves the file
	// system: `chaos faultfs serve`).
	Binary string
	// Upload copies Binary to Path on each host when it is not there
	// already; without it Path is Binary (local mode).
	Upload bool
	// Path is the chaos binary on the hosts.
	Path string
	// Names is when the file system makes name changes durable ("" is
	// faultfs.NamesPOSIX).
	Names faultfs.Names
}

// NewFaultFS places the fault file system's binary in layout: this
// executable, copied to BinDir/chaos-faultfs when upload (a name of its
// own, so that it never replaces a node's binary while the node runs).
func NewFaultFS(layout Layout, upload bool) (*FaultFS, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("storage faults: find the chaos binary that serves the fault file system: %w", err)
	}
	f := &FaultFS{Binary: exe, Upload: upload, Path: exe}
	if upload {
		f.Path = path.Join(layout.BinDir, "chaos-faultfs")
	}
	return f, nil
}

// StorageMount is where one node's data directory and its fault file
// system's files are on the node's host.
type StorageMount struct {
	// Node is the node's name, for errors.
	Node string
	// Data is the node's data directory: the mount point when FS is set.
	Data string
	// Backing is the directory the fault file system serves (Data with
	// ".backing" appended).
	Backing string
	// Socket is the file system's control socket, in the node's directory.
	Socket string
	// Daemon is the file system's process (faultfs.pid, .started, .log in
	// the node's directory).
	Daemon Daemon
	// FS is how the system serves Data; nil when it runs without storage
	// faults (Data is a plain directory).
	FS *FaultFS
}

// Storage is a system whose nodes keep their data in a directory of their
// own, which storage faults can serve through the fault file system.
type Storage interface {
	// StorageMount is where n's data directory is, and how it is served.
	StorageMount(n Node) StorageMount
}

// NewStorageMount is the mount of node n whose directory is nodeDir and
// data directory data; fs nil when storage faults are off.
func NewStorageMount(n Node, nodeDir, data string, fs *FaultFS) StorageMount {
	return StorageMount{Node: n.Name, Data: data, Backing: data + ".backing", Socket: path.Join(nodeDir, "faultfs.sock"),
		Daemon: Daemon{Dir: nodeDir, Name: "faultfs"}, FS: fs}
}

// Host is the file system's client on the host, through the chaos binary
// there; m.FS must be set.
func (m StorageMount) Host() faultfs.Host {
	return faultfs.Host{Path: m.FS.Path, Socket: m.Socket, Names: m.FS.Names}
}

// Install makes the backing directory (mode 0700, as etcd wants its data
// directory) and the mount point, and puts the chaos binary on the host
// unless the same file is there. Nothing without FS.
func (m StorageMount) Install(ctx context.Context, r control.Remote) error {
	if m.FS == nil {
		return nil
	}
	b, d := control.ShellQuote(m.Backing), control.ShellQuote(m.Data)
	if err := Run(ctx, r, fmt.Sprintf("mkdir -p %s %s && chmod 700 %s", b, d, b)); err != nil {
		return fmt.Errorf("%s: storage faults: install: %w", m.Node, err)
	}
	if !m.FS.Upload {
		return nil
	}
	sum, err := control.FileSHA256(m.FS.Binary)
	if err != nil {
		return fmt.Errorf("%s: storage faults: %w", m.Node, err)
	}
	if _, err := control.EnsureFile(ctx, r, m.FS.Binary, m.FS.Path, sum, 0o755); err != nil {
		return fmt.Errorf("%s: storage faults: %w", m.Node, err)
	}
	return nil
}

// mountedCmd succeeds when Data is a mount point on the host (its
// mount namespace's /proc/self/mounts lists it).
func (m StorageMount) mountedCmd() string {
	return fmt.Sprintf("awk -v d=%s '$2 == d { f = 1 } END { exit !f }' /proc/self/mounts", control.ShellQuote(m.Data))
}

// detachCmd detaches whatever is mounted at Data (a mount whose server
// died answers nothing but ENOTCONN until it is).
func (m StorageMount) detachCmd() string {
	return fmt.Sprintf("if %s; then umount -l %s; fi", m.mountedCmd(), control.ShellQuote(m.Data))
}

// Mount serves Data through the fault file system unless its daemon runs
// already, and returns once the file system answers on its control socket
// (it opens the socket once mounted). A mount left by a file system that
// died is detached first. Nothing without FS.
func (m StorageMount) Mount(ctx context.Context, r control.Remote) error {
	if m.FS == nil {
		return nil
	}
	p, err := m.Daemon.Process(ctx, r)
	if err != nil {
		return fmt.Errorf("%s: storage faults: %w", m.Node, err)
	}
	if p.Pid != 0 {
		return nil
	}
	if err := Run(ctx, r, m.detachCmd()); err != nil {
		return fmt.Errorf("%s: storage faults: detach a dead mount at %s: %w", m.Node, m.Data, err)
	}
	h := m.Host()
	if err := m.Daemon.Start(ctx, r, h.ServeArgv(m.Backing, m.Data)); err != nil {
		return fmt.Errorf("%s: storage faults: start the fault file system: %w", m.Node, err)
	}
	if _, err := h.Status(ctx, r); err != nil {
		return fmt.Errorf("%s: storage faults: the fault file system does not answer (see %s): %w", m.Node, m.Daemon.LogFile(), err)
	}
	return nil
}

// Unmount stops the file system's daemon, if it runs (SIGTERM: it
// unmounts; SIGKILL after five seconds), and detaches Data if it is still
// mounted then. It needs no FS: what an earlier run left is unmounted the
// same way.
func (m StorageMount) Unmount(ctx context.Context, r control.Remote) error {
	var errs []error
	if err := m.Daemon.Stop(ctx, r); err != nil {
		errs = append(errs, fmt.Errorf("stop the fault file system: %w", err))
	}
	if err := Run(ctx, r, m.detachCmd()); err != nil {
		errs = append(errs, fmt.Errorf("detach %s: %w", m.Data, err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: storage faults: %w", m.Node, err)
	}
	return nil
}

// Leftovers names, in a few words each, the file system's process when it
// runs and a mount at Data: what Unmount would remove. It changes nothing.
func (m StorageMount) Leftovers(ctx context.Context, r control.Remote) ([]string, error) {
	var out []string
	p, err := m.Daemon.Process(ctx, r)
	switch {
	case err != nil:
		return nil, fmt.Errorf("fault file system: %w", err)
	case p.Pid != 0:
		out = append(out, fmt.Sprintf("fault file system process %d, running", p.Pid))
	}
	res, err := r.Run(ctx, m.mountedCmd())
	if err != nil {
		return out, fmt.Errorf("fault file system: %w", err)
	}
	if res.ExitCode == 0 {
		out = append(out, "fault file system mounted at "+m.Data)
	}
	return out, nil
}

// wipeCmd removes the backing directory (Data must be unmounted) and the
// file system's log.
func (m StorageMount) wipeCmd() string {
	return "rm -rf " + control.ShellQuote(m.Backing) + " " + control.ShellQuote(m.Daemon.LogFile())
}

// Logs are the file system's log when the system serves m through it
// (what a system's CollectLogs adds), else none.
func (m StorageMount) Logs() []string {
	if m.FS == nil {
		return nil
	}
	return []string{m.Daemon.LogFile()}
}

// Wipe unmounts Data and removes the backing directory, so the next Start
// begins empty; the system removes Data itself.
func (m StorageMount) Wipe(ctx context.Context, r control.Remote) error {
	if err := m.Unmount(ctx, r); err != nil {
		return err
	}
	if err := Run(ctx, r, m.wipeCmd()); err != nil {
		return fmt.Errorf("%s: storage faults: wipe: %w", m.Node, err)
	}
	return nil
}

// unmountStorage is m.Unmount when the system serves m through the fault
// file system (a system's Stop, after its node's), and nothing otherwise.
func unmountStorage(ctx context.Context, r control.Remote, m StorageMount) error {
	if m.FS == nil {
		return nil
	}
	return m.Unmount(ctx, r)
}

// wipeStorage is m.Wipe when the system serves m through the fault file
// system (a system's Wipe), and nothing otherwise.
func wipeStorage(ctx context.Context, r control.Remote, m StorageMount) error {
	if m.FS == nil {
		return nil
	}
	return m.Wipe(ctx, r)
}
