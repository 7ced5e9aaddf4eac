package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// atomicFile is a local file written under path+".tmp" and renamed onto path
// by commit, so that path holds either its old content or all of the new.
type atomicFile struct {
	f    *os.File
	path string
	mode os.FileMode
}

// createAtomic starts writing path.
func createAtomic(path string, mode os.FileMode) (*atomicFile, error) {
	f, err := os.OpenFile(path+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode.Perm())
	if err != nil {
		return nil, err
	}
	return &atomicFile{f: f, path: path, mode: mode.Perm()}, nil
}

func (a *atomicFile) Write(p []byte) (int, error) { return a.f.Write(p) }

// commit closes the file, sets its mode (regardless of the umask) and moves
// it onto path. On error the temporary file is removed.
func (a *atomicFile) commit() error {
	err := a.f.Close()
	if err == nil {
		err = os.Chmod(a.f.Name(), a.mode)
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		_ = os.Remove(a.f.Name())
	}
	return err
}

// abort closes and removes the temporary file; path is untouched.
func (a *atomicFile) abort() {
	_ = a.f.Close()
	_ = os.Remove(a.f.Name())
}

// copyAtomic streams r into path atomically, stopping when ctx is done.
func copyAtomic(ctx context.Context, r io.Reader, path string, mode os.FileMode) error {
	a, err := createAtomic(path, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(a, ctxReader{ctx, r}); err != nil {
		a.abort()
		return err
	}
	return a.commit()
}

// ctxReader fails reads once ctx is done, so a copy stops within one
// buffer of ctx ending.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// transferError is the one-line error of a copy on host's side; what names
// it ("upload a to b"). A full disk is said plainly.
func transferError(host, what string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%s: %s: disk full: %w", host, what, err)
	}
	return fmt.Errorf("%s: %s: %w", host, what, err)
}
