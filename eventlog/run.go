package eventlog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"chaos/internal/inputfile"
)

// LoadRun reads runDir/nodes/*/events.jsonl and merges them into one
// slice sorted by time; events with equal times keep file order, files in
// node-directory order. It reads as [ScanRun] does, with its warnings and
// errors, and holds every event: a long run's checks read with ScanRun.
//
// Times come from each node's own clock, so under clock faults the merged
// order across nodes is approximate; per-node checks should rely on file
// order within a node (Line), not on the merged order.
func LoadRun(runDir string) ([]Event, []string, error) {
	var all []Event
	warnings, err := ScanRun(runDir, func(_ string, e *Event) error {
		all = append(all, *e)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortStableFunc(all, func(a, b Event) int { return a.Time.Compare(b.Time) })
	return all, warnings, nil
}

// ScanRun reads runDir/nodes/*/events.jsonl one after another, in
// node-directory order, and gives each event to fn in file order with the
// name of its node directory (see [ScanEvents]): it holds one line at a
// time, whatever the logs' length. Torn lines that end a life are
// skipped, each said in a warning naming the file and line. A run without
// any event log is an error wrapping os.ErrNotExist; a bad line is an
// error naming the file and line, and so is an error of fn; an event log
// that is not a regular file (a link to /dev/zero, a pipe) is an error
// wrapping inputfile.ErrNotRegular, refused before it is read.
func ScanRun(runDir string, fn func(node string, e *Event) error) ([]string, error) {
	return scanRun(runDir, scanOptions{}, fn)
}

// ScanRunOf is ScanRun giving fn only the events of the kinds named. A
// line whose "event" field names another kind is not decoded, so reading
// a long log for its rare kinds (roles, starts) takes a fraction of the
// time, and a bad line of another kind goes unnoticed, unless it is a
// torn line (which does not end as a whole line does).
func ScanRunOf(runDir string, kinds []Kind, fn func(node string, e *Event) error) ([]string, error) {
	return scanRun(runDir, scanOptions{kinds: slices.Clip(kinds)}, fn)
}

// scanRun is ScanRun with o.
func scanRun(runDir string, o scanOptions, fn func(node string, e *Event) error) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(runDir, "nodes", "*", FileName))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no nodes/*/%s: %w", runDir, FileName, os.ErrNotExist)
	}
	slices.Sort(paths)
	var warnings []string
	for _, p := range paths {
		node := filepath.Base(filepath.Dir(p))
		f, err := inputfile.Open(p)
		if err != nil {
			return nil, err
		}
		warns, err := scanEvents(f, func(e *Event) error { return fn(node, e) }, o)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, w := range warns {
			warnings = append(warnings, fmt.Sprintf("%s: %s", p, w))
		}
	}
	return warnings, nil
}
