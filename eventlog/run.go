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
// node-directory order. Torn lines that end a life (see [ReadEvents]) are
// skipped, each said in a warning naming the file and line. A run without
// any event log is an error wrapping os.ErrNotExist; a bad line is an
// error naming the file and line; an event log that is not a regular file
// (a link to /dev/zero, a pipe) is an error wrapping
// inputfile.ErrNotRegular, refused before it is read.
//
// Times come from each node's own clock, so under clock faults the merged
// order across nodes is approximate; per-node checks should rely on file
// order within a node (Line), not on the merged order.
func LoadRun(runDir string) ([]Event, []string, error) {
	paths, err := filepath.Glob(filepath.Join(runDir, "nodes", "*", FileName))
	if err != nil {
		return nil, nil, err
	}
	if len(paths) == 0 {
		return nil, nil, fmt.Errorf("%s: no nodes/*/%s: %w", runDir, FileName, os.ErrNotExist)
	}
	slices.Sort(paths)
	var (
		all      []Event
		warnings []string
	)
	for _, p := range paths {
		f, err := inputfile.Open(p)
		if err != nil {
			return nil, nil, err
		}
		events, warns, err := ReadEvents(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		all = append(all, events...)
		for _, w := range warns {
			warnings = append(warnings, fmt.Sprintf("%s: %s", p, w))
		}
	}
	slices.SortStableFunc(all, func(a, b Event) int { return a.Time.Compare(b.Time) })
	return all, warnings, nil
}
