package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"
)

// Run runs the proxy of a host until ctx ends: it takes redirected
// connections on an ephemeral port of 127.0.0.1 (where REDIRECT sends a
// host's own connections) and serves the control API on
// ControlSocket(dir), mode 0600 in a directory that is left mode 0700
// (see privateDir). A stale socket of an earlier proxy is replaced. Its
// error says what could not be set up, or how serving failed.
func Run(ctx context.Context, dir string, log *slog.Logger) error {
	if err := privateDir(dir, os.Geteuid()); err != nil {
		return fmt.Errorf("fault proxy: %w", err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("fault proxy: listen: %w", err)
	}
	defer ln.Close()
	sock := ControlSocket(dir)
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("fault proxy: remove the stale control socket: %w", err)
	}
	ctl, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("fault proxy: control socket: %w", err)
	}
	defer os.Remove(sock)
	if err := os.Chmod(sock, 0o600); err != nil {
		_ = ctl.Close()
		return fmt.Errorf("fault proxy: control socket: %w", err)
	}
	links := &Table{}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: Handler(links, port), ReadHeaderTimeout: 5 * time.Second}
	p := &Proxy{Links: links, OriginalDst: OriginalDst, Log: log,
		Dial: func(ctx context.Context, from netip.Addr, to netip.AddrPort) (*net.TCPConn, error) {
			return DialMarked(ctx, Mark, from, to)
		}}
	log.Info("fault proxy up", "port", port, "control", sock)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ctl) })
	err = p.Serve(ctx, ln)
	shut, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	wg.Wait()
	return err
}

// privateDir makes dir (and missing parents, mode 0700) and leaves it a
// directory of mode 0700 owned by uid, so that only uid (root, on a host)
// reaches the control socket in it: a directory of uid's already there
// with another mode (made by a plain `mkdir -p`, as the daemon's start
// did before it passed -m 0700) is chmodded to 0700; one of another
// user's, or a symbolic link, is refused, since its owner could reach
// the socket.
func privateDir(dir string, uid int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link, not a directory: refused", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory: refused", dir)
	}
	if owner, ok := fileOwner(fi); ok && owner != uid {
		return fmt.Errorf("directory %s belongs to uid %d, not to this process's uid %d: refused (remove it, or give it to uid %d)", dir, owner, uid, uid)
	}
	if fi.Mode().Perm() == 0o700 {
		return nil
	}
	return os.Chmod(dir, 0o700)
}
