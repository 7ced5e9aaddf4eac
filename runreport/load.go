package runreport

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"chaos/eventlog"
	"chaos/foreignlog"
	"chaos/history"
	"chaos/internal/inputfile"
	"chaos/testrun/runrecord"
)

// Run is what a run directory holds, read for the report.
type Run struct {
	Dir     string
	Results runrecord.Results
	// Test is test.json; nil when the directory has none (a bare history
	// checked by `chaos check`).
	Test *runrecord.TestRecord
	// history is what the page draws of history.jsonl (see WithHistory);
	// never nil in a Run that Load or WithHistory made.
	history *Digest
	// Roles are the nodes' role, start and stop events (the rest of the
	// event logs is not drawn); empty without event logs.
	Roles []foreignlog.Event
	// Notes say what could not be read or drawn, for the page.
	Notes []string
	// Files are the run's files, relative to Dir, sorted.
	Files []File
}

// File is one file of the run directory.
type File struct {
	Path string
	Size int64
}

// Load reads the run directory dir. results.json and history.jsonl are
// required; test.json and the event logs are optional, and an event log
// that cannot be read is a note on the page, not an error.
func Load(dir string) (Run, error) { return load(dir, nil) }

// LoadDigested is Load with d, which has taken every op of
// dir/history.jsonl, in place of reading it.
func LoadDigested(dir string, d *Digest) (Run, error) {
	if d == nil {
		return Run{Dir: dir}, errors.New("report: no digest of the history")
	}
	return load(dir, d)
}

// load is Load, reading dir/history.jsonl only when d is nil.
func load(dir string, d *Digest) (Run, error) {
	r := Run{Dir: dir, history: d}
	var err error
	if r.Results, err = runrecord.ReadResults(dir); err != nil {
		return r, fmt.Errorf("report: %w", err)
	}
	if t, err := runrecord.ReadTestRecord(dir); err == nil {
		r.Test = &t
		if note := t.ReplayNote(); note != "" {
			r.Notes = append(r.Notes, note)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.Notes = append(r.Notes, "test.json: "+err.Error())
	}
	if r.history == nil {
		if r.history, err = readHistory(filepath.Join(dir, "history.jsonl")); err != nil {
			return r, fmt.Errorf("report: %w", err)
		}
	}
	r.Roles, err = loadRoles(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.Notes = append(r.Notes, "the event logs cannot be read: "+err.Error())
	}
	if r.Files, err = listFiles(dir); err != nil {
		return r, fmt.Errorf("report: %w", err)
	}
	return r, nil
}

// WithHistory returns r drawing h as its history (Load reads it from the
// run directory).
func (r Run) WithHistory(h history.History) Run {
	r.history = digestOf(h)
	return r
}

// readHistory reads history.jsonl op by op into its digest; a torn last
// line is skipped, as every reader of the history does.
func readHistory(path string) (*Digest, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &Digest{}
	if _, err := history.Scan(f, func(o *history.Op) error { d.Add(o); return nil }); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// maxRoles bounds the events of one node the node timeline draws: a node
// with more has an even sample of them drawn (eventlog.Spread), so that a
// long run's report is drawn in bounded memory.
const maxRoles = 2000

// loadRoles reads the event logs of every node, one line at a time, and
// keeps the events the node timeline draws, at most maxRoles of each
// node's, in the form foreignlog analyses. The lines of other events are
// not decoded (eventlog.ScanRunOf).
func loadRoles(dir string) ([]foreignlog.Event, error) {
	spreads := map[string]*eventlog.Spread{} // by node directory
	kinds := []eventlog.Kind{eventlog.KindRole, eventlog.KindStart, eventlog.KindStop}
	_, err := eventlog.ScanRunOf(dir, kinds, func(node string, e *eventlog.Event) error {
		if spreads[node] == nil {
			spreads[node] = eventlog.NewSpread(maxRoles)
		}
		spreads[node].Offer(e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []foreignlog.Event
	for _, node := range slices.Sorted(maps.Keys(spreads)) {
		for _, e := range spreads[node].Events() {
			if ev, ok := foreignlog.FromEventLog(e); ok {
				out = append(out, ev)
			}
		}
	}
	return out, nil
}

// listFiles lists the regular files under dir but report.html, sorted.
func listFiles(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == ReportFile {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Size: info.Size()})
		return nil
	})
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, err
}

// loadStart is the wall time of the history's time 0, and whether it is
// exact: results.json's load_started, else test.json's (or results.json's)
// start time, which is early by the time the run took to set up.
func (r Run) loadStart() (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, r.Results.LoadStarted); err == nil {
		return t, true
	}
	for _, s := range []string{r.Results.Started, testStarted(r.Test)} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, false
		}
	}
	return time.Time{}, false
}

func testStarted(t *runrecord.TestRecord) string {
	if t == nil {
		return ""
	}
	return t.Started
}
