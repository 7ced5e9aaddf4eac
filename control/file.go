package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"chaos/internal/atomicfile"
)

// copyAtomic streams r into path atomically (see package atomicfile),
// stopping when ctx is done.
func copyAtomic(ctx context.Context, r io.Reader, path string, mode os.FileMode) error {
	return atomicfile.WriteFunc(path, mode, func(w io.Writer) error {
		_, err := io.Copy(w, ctxReader{ctx, r})
		return err
	})
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
