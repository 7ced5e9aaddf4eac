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

// Config is what Run needs.
type Config struct {
	// Dir is the proxy's directory: its control socket goes there.
	Dir string
	// MaxConns caps the connections forwarded at once (Proxy.MaxConns: 0
	// is DefaultMaxConns).
	MaxConns int
	// Log records the proxy's connections and troubles.
	Log *slog.Logger
}

// Run runs the proxy of a host until ctx ends: it takes redirected
// connections on an ephemeral port of 127.0.0.1 (where REDIRECT sends a
// host's own connections) and serves the control API on
// ControlSocket(cfg.Dir), mode 0600 in a directory that is left mode 0700
// (see privateDir). A stale socket of an earlier proxy is replaced. Its
// error says what could not be set up, or how serving failed.
func Run(ctx context.Context, cfg Config) error {
	links := &Table{}
	p := &Proxy{Links: links, OriginalDst: OriginalDst, Log: cfg.Log, MaxConns: cfg.MaxConns,
		Dial: func(ctx context.Context, from netip.Addr, to netip.AddrPort) (*net.TCPConn, error) {
			return DialMarked(ctx, Mark, from, to)
		}}
	if _, err := p.maxConns(); err != nil {
		return err
	}
	if err := privateDir(cfg.Dir, os.Geteuid()); err != nil {
		return fmt.Errorf("fault proxy: %w", err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("fault proxy: listen: %w", err)
	}
	defer ln.Close()
	sock := ControlSocket(cfg.Dir)
	ctl, err := listenControl(sock)
	if err != nil {
		return err
	}
	defer os.Remove(sock)
	port := ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: Handler(links, port, p.Conns), ReadHeaderTimeout: 5 * time.Second}
	limit := p.Conns().Max
	p.log().Info("fault proxy up", "port", port, "control", sock, "max_conns", limit, "max_buffer_bytes", limit*connBufferMax)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ctl) })
	err = p.Serve(ctx, ln)
	shut, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	wg.Wait()
	return err
}

// listenControl listens on the unix socket sock, mode 0600, replacing a
// stale socket of an earlier proxy.
func listenControl(sock string) (net.Listener, error) {
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("fault proxy: remove the stale control socket: %w", err)
	}
	ctl, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("fault proxy: control socket: %w", err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		_ = ctl.Close()
		return nil, fmt.Errorf("fault proxy: control socket: %w", err)
	}
	return ctl, nil
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
