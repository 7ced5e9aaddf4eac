package faultfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// CloseWait is how long Run's power loss waits for the files of the mount
// to be closed: a killed program's files are released shortly after it
// died.
const CloseWait = 2 * time.Second

// Run mounts backing at mountpoint and serves it with opts (see Mount),
// with the control API on the unix socket sock (mode 0600; a stale socket
// of an earlier run is replaced), until ctx ends or the file system is
// unmounted from outside.
// It then unmounts; if files of the mount are still open it detaches the
// mount lazily (MNT_DETACH) and says so in its error. Its errors name
// what could not be set up (see Mount) or how it ended badly.
func Run(ctx context.Context, backing, mountpoint, sock string, opts Options, log *slog.Logger) error {
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("faultfs: remove the stale control socket %s: %w", sock, err)
	}
	fsys, err := Mount(backing, mountpoint, nil, opts)
	if err != nil {
		return err
	}
	ctl, err := net.Listen("unix", sock)
	if err == nil {
		err = os.Chmod(sock, 0o600)
	}
	if err != nil {
		if ctl != nil {
			ctl.Close()
		}
		return errors.Join(fmt.Errorf("faultfs: control socket %s: %w", sock, err), fsys.Unmount())
	}
	defer os.Remove(sock)
	srv := &http.Server{Handler: logged(Handler(fsys.Tracker, CloseWait), log), ReadHeaderTimeout: 5 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ctl) })
	log.Info("faultfs up", "backing", backing, "mount", mountpoint, "control", sock, "undo_memory", fsys.undo.limit)
	outside := false
	select {
	case <-ctx.Done():
	case <-fsys.Done():
		outside = true
	}
	shut, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	wg.Wait()
	if outside {
		return fmt.Errorf("faultfs: %s was unmounted from outside", mountpoint)
	}
	if err := fsys.Unmount(); err != nil {
		if derr := syscall.Unmount(mountpoint, syscall.MNT_DETACH); derr != nil {
			return fmt.Errorf("faultfs: unmount %s: %w (and detaching it: %v)", mountpoint, err, derr)
		}
		return fmt.Errorf("faultfs: unmount %s: %w: files were still open, detached it lazily", mountpoint, err)
	}
	log.Info("faultfs unmounted", "mount", mountpoint)
	return nil
}

// logged logs each control request that changes something, and its
// answer's status.
func logged(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		if r.Method != http.MethodGet {
			log.Info("control", "method", r.Method, "path", r.URL.Path, "status", rec.code)
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}
