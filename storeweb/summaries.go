package storeweb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sync"

	"chaos/checker"
)

// summaryCache remembers, for each run directory the store has read, the
// summary it showed and the results.json it was made from, so that
// listing an unchanged store reads no file and parses no JSON: it only
// stats each results.json.
//
// An entry holds while results.json is the file it was made from: the
// same file (os.SameFile: an atomic rewrite is a new file), with the same
// size and modification time. summary.json is not looked at while its
// results.json is unchanged: a summary is results.json's, so the entry
// still shows what results.json says (see Store.summaryOf). A listing
// forgets the entries of run directories it no longer lists. It never
// writes into the store, which may be read-only.
type summaryCache struct {
	mu       sync.Mutex
	gen      uint64 // counts listings; an entry not used by the latest is swept
	versions uint64 // counts reads, to name each (runResults.version)
	byDir    map[string]cachedSummary
}

// runResults is what the pages show of a run's results.json.
type runResults struct {
	sum    checker.Summary
	broken string // why results.json cannot be read; "" when it can
	// version names this read among all of the store's: equal versions
	// are equal runResults. 0 for one that was not remembered.
	version uint64
}

// cachedSummary is a runResults and the results.json it was read from.
type cachedSummary struct {
	runResults
	results fs.FileInfo
	gen     uint64 // the last listing that used it
}

// sameFile says a and b are one file, unchanged.
func sameFile(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// get is rel's entry when it was made from results as it is now.
func (c *summaryCache) get(rel string, results fs.FileInfo) (runResults, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byDir[rel]
	if !ok || !sameFile(e.results, results) {
		return runResults{}, false
	}
	e.gen = c.gen
	c.byDir[rel] = e
	return e.runResults, true
}

// put remembers r, read from results, for rel, and returns it with its
// version.
func (c *summaryCache) put(rel string, r runResults, results fs.FileInfo) runResults {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byDir == nil {
		c.byDir = make(map[string]cachedSummary)
	}
	c.versions++
	r.version = c.versions
	c.byDir[rel] = cachedSummary{runResults: r, results: results, gen: c.gen}
	return r
}

// startListing begins a listing; pass what it returns to sweep once every
// run listed was read.
func (c *summaryCache) startListing() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	return c.gen
}

// sweep forgets the entries that no read since startListing returned gen
// used: run directories that are gone.
func (c *summaryCache) sweep(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for rel, e := range c.byDir {
		if e.gen < gen {
			delete(c.byDir, rel)
		}
	}
}

// summaryOf is what the pages show of the results of the run directory
// d, remembered while its results.json is unchanged (summaryCache). A
// results.json that does not parse is remembered as such; one that cannot
// be read (its permissions, which may change without changing the file)
// is not.
func (s *Store) summaryOf(d runDir) runResults {
	results, err := resultsInfo(d.stat)
	if err != nil {
		return runResults{broken: err.Error()}
	}
	if r, ok := s.summaries.get(d.rel, results); ok {
		return r
	}
	// What is read is checked through the store's root first, and read
	// after it was stat'ed: a file rewritten in between is newer than its
	// entry says, and is read again next time.
	if results, err = resultsInfo(d.checkedStat); err != nil {
		return runResults{broken: err.Error()}
	}
	var r runResults
	r.sum, err = s.readSummary(d, results)
	var unreadable *fs.PathError
	switch {
	case errors.As(err, &unreadable):
		return runResults{broken: fmt.Sprintf("results.json cannot be read: %v", unreadable.Err)}
	case err != nil:
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // SummarizeFile names the file; the page names the run
		}
		r = runResults{broken: fmt.Sprintf("results.json is corrupt: %v", err)}
	}
	return s.summaries.put(d.rel, r, results)
}

// readSummary reads d's summary.json when it is a summary of results, the
// results.json beside it; else (a run from before summaries, a summary
// that is missing, corrupt, unreadable or stale) it summarizes
// results.json itself, with SummarizeFile's errors: an *fs.PathError
// when it cannot be read.
func (s *Store) readSummary(d runDir, results fs.FileInfo) (checker.Summary, error) {
	if st, err := d.checkedStat(checker.SummaryFile); err == nil && st.Mode().IsRegular() {
		sum, err := checker.ReadSummary(s.abs(path.Join(d.rel, checker.SummaryFile)))
		if err == nil && sum.ResultsSize == results.Size() {
			return sum, nil
		}
	}
	return checker.SummarizeFile(s.abs(path.Join(d.rel, resultsFile)))
}

// resultsInfo stats a run's results.json with stat, one of runDir's; the
// error says what is wrong in words.
func resultsInfo(stat func(name string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	st, err := stat(resultsFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no results.json: the run is still going, or stopped before it was checked")
	case err != nil:
		return nil, fmt.Errorf("results.json: %v", err)
	case !st.Mode().IsRegular():
		return nil, errors.New("results.json is not a file")
	}
	return st, nil
}
