package main

import (
	"fmt"
	"os"
	"path/filepath"

	"chaos/history"
	"chaos/history/elle"
)

// ednExport writes the history `chaos check --export elle` reads into
// history.edn beside it, as the check reads it: to a temporary file that
// replaces history.edn once whole.
type ednExport struct {
	path string // history.edn
	tmp  *os.File
	w    *elle.Writer
}

// newEDNExport starts the export of the history at historyPath.
func newEDNExport(historyPath string) (*ednExport, error) {
	path := filepath.Join(filepath.Dir(historyPath), "history.edn")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history.edn.*")
	if err != nil {
		return nil, fmt.Errorf("--export elle: %w", err)
	}
	return &ednExport{path: path, tmp: tmp, w: elle.NewWriter(tmp)}, nil
}

// observe returns an observer of the history's ops that hands each to
// next (when set), then to the export.
func (e *ednExport) observe(next func(*history.Op)) func(*history.Op) {
	return func(op *history.Op) {
		if next != nil {
			next(op)
		}
		e.w.Add(op)
	}
}

// finish puts history.edn in place. An operation that is no transaction
// Elle can read is bad input (254), a file that cannot be written a setup
// failure (255); either way no history.edn is written.
func (e *ednExport) finish() error {
	if err := e.w.Close(); err != nil {
		return usageErrorf("--export elle: %v", err)
	}
	if err := e.tmp.Close(); err != nil {
		return setupError(fmt.Errorf("--export elle: %w", err))
	}
	if err := os.Rename(e.tmp.Name(), e.path); err != nil {
		return setupError(fmt.Errorf("--export elle: %w", err))
	}
	e.tmp = nil
	return nil
}

// abandon removes the temporary file of an export that did not finish.
func (e *ednExport) abandon() {
	if e.tmp != nil {
		e.tmp.Close()
		os.Remove(e.tmp.Name())
	}
}
