package storeweb

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"time"

	"chaos/campaign"
	"chaos/checker"
	"chaos/testrun"
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
	// Results is the run's results.json; zero when Broken.
	Results testrun.Results
	// HasReport says report.html exists.
	HasReport bool
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
// one broken run with an empty Time.
func (s *Store) Runs() ([]Run, error) {
	names, err := s.subdirs(".")
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.dir, err)
	}
	var runs []Run
	for _, name := range names {
		if name == campaignsDir {
			continue
		}
		times, err := s.subdirs(name)
		if err != nil {
			runs = append(runs, Run{Name: name, Verdict: Broken, Broken: err.Error()})
			continue
		}
		for _, t := range times {
			runs = append(runs, s.readRun(name, t))
		}
	}
	slices.SortStableFunc(runs, newestFirst)
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
	return s.readRun(name, t), nil
}

// readRun reads what the pages show of the run directory name/t.
func (s *Store) readRun(name, t string) Run {
	rel := path.Join(name, t)
	r := Run{Name: name, Time: t}
	res, err := s.readResults(rel)
	if err != nil {
		r.Verdict, r.Broken = Broken, err.Error()
	} else {
		r.Results, r.Verdict = res, verdict(res.Valid)
	}
	_, err = s.stat(path.Join(rel, reportFile))
	r.HasReport = err == nil
	r.Started = s.startTime(rel, t, res.Started)
	return r
}

// readResults reads rel's results.json with its owner,
// campaign.ReadResults, once the store has checked that it is a file in
// the store; the error says what is wrong in words.
func (s *Store) readResults(rel string) (testrun.Results, error) {
	st, err := s.stat(path.Join(rel, resultsFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return testrun.Results{}, errors.New("no results.json: the run is still going, or stopped before it was checked")
	case err != nil:
		return testrun.Results{}, fmt.Errorf("results.json: %v", err)
	case !st.Mode().IsRegular():
		return testrun.Results{}, errors.New("results.json is not a file")
	}
	res, err := testrun.ReadResults(s.abs(rel))
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // ReadResults names the file; the page names the run
		}
		return testrun.Results{}, fmt.Errorf("results.json is corrupt: %v", err)
	}
	return res, nil
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
func (s *Store) readTest(rel string) (testrun.TestRecord, error) {
	if _, err := s.stat(path.Join(rel, testFile)); err != nil {
		return testrun.TestRecord{}, err
	}
	return testrun.ReadTestRecord(s.abs(rel))
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
