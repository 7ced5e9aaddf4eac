package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"chaos/control"
)

// Collect downloads each remote file that exists into the local directory
// dir, keeping going past failures and reporting them all.
func Collect(ctx context.Context, r control.Remote, n Node, dir string, files ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return wrap(n, "collect logs", err)
	}
	var errs []error
	for _, f := range files {
		res, err := r.Run(ctx, "test -f "+control.ShellQuote(f))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if res.ExitCode != 0 {
			continue // never written: the node did not get that far
		}
		if err := r.Download(ctx, f, filepath.Join(dir, path.Base(f))); err != nil {
			errs = append(errs, fmt.Errorf("download %s: %w", f, err))
		}
	}
	return wrap(n, "collect logs", errors.Join(errs...))
}
