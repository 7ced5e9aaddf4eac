package storeweb

import (
	"cmp"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"time"

	"chaos/campaign"
	"chaos/checker"
	"chaos/testrun/runrecord"
)

// Verdicts of a listed run: a checker's, as package campaign names them, or Broken.
const (
	Valid   = campaign.Valid
	Invalid = campaign.Invalid
	Unknown = campaign.Unknown
	// Broken is a run whose results.json is missing or does not parse.
	Broken = "broken"
)

// Files of a run directory the pages use (docs/FORMATS.md, "The store").
const (
	resultsFile = "results.json"
	testFile    = "test.json"
	reportFile  = "report.html"
	// campaignsDir holds chaos test-all's campaigns, not runs.
	campaignsDir = "campaigns"
	// stampLayout is a run directory's name: its UTC start time.
	stampLayout = "20060102T150405.000Z"
)

// Run is one run directory store/<Name>/<Time>/ as the pages show it.
type Run struct {
	Name, Time string
	// Started is the start time <Time> names, else results.json's or
	// test.json's; zero when none says.
	Started time.Time
	// Verdict is Valid, Invalid, Unknown or Broken.
	Verdict string
	// Broken says why the run is broken; "" when it is not.
	Broken string
	// Summary is what the pages show of the run's results.json: its
	// summary.json, or results.json summarized when that is missing or not
	// a summary of it (see Store.summaryOf); zero when Broken.
	Summary checker.Summary
	// HasReport says report.html exists.
	HasReport bool
	// version names the read of results.json that Verdict, Broken and
	// Summary come from (runResults.version); 0 when none was remembered.
	version uint64
}

// Href is the run's page.
func (r Run) Href() string {
	return "/runs/" + url.PathEscape(r.Name) + "/" + url.PathEscape(r.Time) + "/"
}

// ZipHref is the run directory as a .zip.
func (r Run) ZipHref() string { return "/zip/" + url.PathEscape(r.Name) + "/" + url.PathEscape(r.Time) }

// Runs lists every run of the store, newest first: the directories
// store/<name>/<time>/ other than store/campaigns/. Symlinks (the latest
// links) are not followed, so each run is listed once and none from
// outside the store. A <name> directory that cannot be read is listed as
// one broken run with an empty Time. A run unchanged since the last
// listing is not read again, only stat'ed (see summaryCache).
func (s *Store) Runs() ([]Run, error) {
	names, err := s.subdirs(".")
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.dir, err)
	}
	gen := s.summaries.startListing()
	defer s.summaries.sweep(gen)
	var runs []Run
	for _, name := range names {
		if name == campaignsDir {
			continue
		}
		times, err := s.listDirs(name)
		if err != nil {
			runs = append(runs, Run{Name: name, Verdict: Broken, Broken: err.Error()})
			continue
		}
		for _, t := range times {
			runs = append(runs, s.readRun(s.runDir(name, t)))
		}
	}
	slices.SortFunc(runs, newestFirst) // a run's name and time are unique: the order is total
	return runs, nil
}

// newestFirst orders runs by start time, newest first, then by name.
func newestFirst(a, b Run) int {
	if c := b.Started.Compare(a.Started); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(b.Time, a.Time))
}

// subdirs lists the directories in rel, by name; symlinks are not.
func (s *Store) subdirs(rel string) ([]string, error) {
	entries, err := fs.ReadDir(s.root.FS(), rel)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs, nil
}

// Run reads the run store/<name>/<time>/. A name or time that is not a
// plain name, or a directory a symlink leads out of the store, is
// ErrRefused; a missing one is fs.ErrNotExist.
func (s *Store) Run(name, t string) (Run, error) {
	if _, err := s.dirAt(name, t); err != nil {
		return Run{}, err
	}
	return s.readRun(s.runDir(name, t)), nil
}

// readRun reads what the pages show of the run directory d.
func (s *Store) readRun(d runDir) Run {
	r := Run{Name: d.name, Time: d.time}
	res := s.summaryOf(d)
	if res.broken != "" {
		r.Verdict, r.Broken = Broken, res.broken
	} else {
		r.Summary, r.Verdict = res.sum, verdict(res.sum.Valid)
	}
	r.version = res.version
	_, err := d.stat(reportFile)
	r.HasReport = err == nil
	r.Started = s.startTime(d.rel, d.time, res.sum.Started)
	return r
}

// startTime is the start time the run directory's name t gives, else the
// started of results.json, else of test.json; zero when none parses.
func (s *Store) startTime(rel, t, resultsStarted string) time.Time {
	if when, err := time.Parse(stampLayout, t); err == nil {
		return when
	}
	if when, err := time.Parse(time.RFC3339Nano, resultsStarted); err == nil {
		return when
	}
	if test, err := s.readTest(rel); err == nil {
		if when, err := time.Parse(time.RFC3339Nano, test.Started); err == nil {
			return when
		}
	}
	return time.Time{}
}

// readTest reads rel's test.json with its owner, campaign.ReadTestRecord,
// once the store has checked that it is in the store.
func (s *Store) readTest(rel string) (runrecord.TestRecord, error) {
	if _, err := s.stat(path.Join(rel, testFile)); err != nil {
		return runrecord.TestRecord{}, err
	}
	return runrecord.ReadTestRecord(s.abs(rel))
}

// verdict names a checker's verdict as package campaign does.
func verdict(v checker.Validity) string {
	switch v {
	case checker.Valid:
		return Valid
	case checker.Invalid:
		return Invalid
	}
	return Unknown
}
