package storeweb_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/storeweb"
)

// validRun is the fixture's valid run, as a store path.
const validRun = "register-kill/" + validTime

// writeSummary writes rel's summary.json as checker.WriteResults would for
// its results.json, with ops replaced by ops: a summary the index can only
// have got from summary.json.
func (f fixture) writeSummary(t *testing.T, rel string, ops checker.Counts) {
	t.Helper()
	results, err := os.ReadFile(filepath.Join(f.store, filepath.FromSlash(rel), "results.json"))
	require.NoError(t, err)
	s, err := checker.Summarize(results)
	require.NoError(t, err)
	s.Ops = ops
	f.writeJSON(t, rel+"/"+checker.SummaryFile, s)
}

// runAt lists the store's runs and returns the one at rel.
func runAt(t *testing.T, s *storeweb.Store, rel string) storeweb.Run {
	t.Helper()
	runs, err := s.Runs()
	require.NoError(t, err)
	for _, r := range runs {
		if r.Name+"/"+r.Time == rel {
			return r
		}
	}
	require.Failf(t, "not listed", "%s", rel)
	return storeweb.Run{}
}

func openStore(t *testing.T, dir string) *storeweb.Store {
	t.Helper()
	s, err := storeweb.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// resultsOps are the ops of every results.json of the fixture.
var resultsOps = checker.Counts{Invoke: 10, OK: 7, Fail: 2, Info: 1}

// The index shows a run's summary.json when it summarizes the results.json
// beside it, and results.json itself for a run from before summaries.
func TestSummaryIsWhatTheIndexShows(t *testing.T) {
	f := newFixture(t)
	f.writeSummary(t, validRun, checker.Counts{Invoke: 99})
	s := openStore(t, f.store)

	r := runAt(t, s, validRun)
	assert.Equal(t, storeweb.Valid, r.Verdict)
	assert.Equal(t, checker.Counts{Invoke: 99}, r.Summary.Ops, "from summary.json")
	assert.Equal(t, []checker.FaultCount{{Family: "kill", Count: 1}}, r.Summary.Faults)
	assert.Equal(t, 12.5, r.Summary.DurationS)

	old := runAt(t, s, "register-partition-bug/"+invalidTime)
	assert.Equal(t, storeweb.Invalid, old.Verdict)
	assert.Equal(t, resultsOps, old.Summary.Ops, "no summary.json: from results.json")
	assert.Equal(t, []checker.FaultCount{{Family: "partition", Count: 2}}, old.Summary.Faults)

	srv := httptest.NewServer(storeweb.NewHandler(s))
	defer srv.Close()
	_, _, body := get(t, srv, "/")
	assert.Contains(t, string(body), "99: 0 ok, 0 fail, 0 info")
	_, _, body = get(t, srv, "/runs/"+validRun+"/")
	assert.Contains(t, string(body), "99: 0 ok, 0 fail, 0 info", "the run's page too")
}

// A summary.json that is stale, corrupt, unreadable, not a file or outside
// the store is passed over for results.json; a run whose results.json is
// corrupt too is broken, with the reason.
func TestSummaryThatCannotBeUsedFallsBackToResults(t *testing.T) {
	f := newFixture(t)
	results, err := os.ReadFile(filepath.Join(f.store, validRun, "results.json"))
	require.NoError(t, err)
	planted := checker.Summary{ResultsSize: int64(len(results)), Valid: checker.Invalid, Ops: checker.Counts{Invoke: 99}}
	plantedJSON, err := json.Marshal(planted)
	require.NoError(t, err)
	stale := planted
	stale.ResultsSize++
	staleJSON, err := json.Marshal(stale)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.outside, "summary.json"), plantedJSON, 0o644))

	summary := filepath.Join(f.store, validRun, checker.SummaryFile)
	for name, plant := range map[string]func(){
		"stale":         func() { require.NoError(t, os.WriteFile(summary, staleJSON, 0o644)) },
		"not JSON":      func() { require.NoError(t, os.WriteFile(summary, []byte(`{"results_size": `), 0o644)) },
		"empty object":  func() { require.NoError(t, os.WriteFile(summary, []byte(`{}`), 0o644)) },
		"wrong types":   func() { require.NoError(t, os.WriteFile(summary, []byte(`{"results_size": "x", "valid": 3}`), 0o644)) },
		"a directory":   func() { require.NoError(t, os.Mkdir(summary, 0o755)) },
		"a FIFO":        func() { require.NoError(t, mkfifo(summary)) },
		"outside":       func() { require.NoError(t, os.Symlink(filepath.Join(f.outside, "summary.json"), summary)) },
		"dangling link": func() { require.NoError(t, os.Symlink("nowhere", summary)) },
		"unreadable": func() {
			require.NoError(t, os.WriteFile(summary, plantedJSON, 0o000))
			if _, err := os.ReadFile(summary); err == nil {
				t.Log("unreadable: skipped, files are readable to this user")
				require.NoError(t, os.WriteFile(summary, staleJSON, 0o644))
			}
		},
	} {
		require.NoError(t, os.RemoveAll(summary))
		plant()
		r := runAt(t, openStore(t, f.store), validRun)
		assert.Equal(t, storeweb.Valid, r.Verdict, name)
		assert.Equal(t, resultsOps, r.Summary.Ops, name)
	}

	require.NoError(t, os.RemoveAll(summary))
	require.NoError(t, os.WriteFile(summary, []byte(`{"results_size": `), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.store, validRun, "results.json"), []byte("xyz"), 0o644))
	r := runAt(t, openStore(t, f.store), validRun)
	assert.Equal(t, storeweb.Broken, r.Verdict)
	assert.Equal(t, "results.json is corrupt: invalid character 'x' looking for beginning of value", r.Broken)
}

// The store remembers each run's summary while its results.json is the
// same file with the same size and modification time, and reads it again
// once any of them changes; the index's rows follow.
func TestSummaryCacheFollowsResultsJSON(t *testing.T) {
	f := newFixture(t)
	s := openStore(t, f.store)
	srv := httptest.NewServer(storeweb.NewHandler(s))
	defer srv.Close()
	path := filepath.Join(f.store, validRun, "results.json")
	results, err := os.ReadFile(path)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	_, _, body := get(t, srv, "/")
	require.Contains(t, string(body), "10: 7 ok, 2 fail, 1 info")

	// Rewritten in place, same size, modification time put back: the same
	// file to the store, which does not read it again.
	invalid := strings.Replace(strings.Replace(string(results), `"valid": true`, `"valid": false`, 1), `"invoke": 10`, `"invoke": 19`, 1)
	require.Len(t, invalid, len(results)+1, "true -> false")
	invalid = strings.Replace(invalid, `"ok": 7`, `"ok":7`, 1)
	require.Len(t, invalid, len(results))
	require.NoError(t, os.WriteFile(path, []byte(invalid), 0o644))
	require.NoError(t, os.Chtimes(path, st.ModTime(), st.ModTime()))
	assert.Equal(t, storeweb.Valid, runAt(t, s, validRun).Verdict, "remembered: not read again")

	require.NoError(t, os.Chtimes(path, st.ModTime(), st.ModTime().Add(time.Second)))
	assert.Equal(t, storeweb.Invalid, runAt(t, s, validRun).Verdict, "a new modification time")
	_, _, body = get(t, srv, "/")
	assert.Contains(t, string(body), "19: 7 ok, 2 fail, 1 info")
	assert.Contains(t, listed(body), validRun+" invalid")

	// Replaced by a new file of the same size and time, as an atomic write
	// of the same content would leave it.
	tmp := filepath.Join(f.store, validRun, ".results.json.tmp")
	require.NoError(t, os.WriteFile(tmp, results, 0o644))
	require.NoError(t, os.Chtimes(tmp, st.ModTime(), st.ModTime().Add(time.Second)))
	require.NoError(t, os.Rename(tmp, path))
	assert.Equal(t, storeweb.Valid, runAt(t, s, validRun).Verdict, "a new file")

	// Grown, as chaos check leaves it, with its summary.
	_, err = checker.WriteResults(path, checker.Report{Ops: checker.Counts{Invoke: 3}, Checks: map[string]checker.Result{
		"stats": {Valid: checker.Unknown}}})
	require.NoError(t, err)
	r := runAt(t, s, validRun)
	assert.Equal(t, storeweb.Unknown, r.Verdict)
	assert.Equal(t, checker.Counts{Invoke: 3}, r.Summary.Ops)
	_, _, body = get(t, srv, "/?verdict=unknown")
	assert.Contains(t, listed(body), validRun+" unknown")
	_, _, body = get(t, srv, "/")
	assert.Contains(t, string(body), "3: 0 ok, 0 fail, 0 info")
	assert.NotContains(t, string(body), "19: 7 ok")
}

// A results.json deleted or put back shows at once: only reads are
// remembered, not what is missing.
func TestSummaryOfARunWhoseResultsComeAndGo(t *testing.T) {
	f := newFixture(t)
	s := openStore(t, f.store)
	path := filepath.Join(f.store, validRun, "results.json")
	results, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, storeweb.Valid, runAt(t, s, validRun).Verdict)
	require.NoError(t, os.Remove(path))
	r := runAt(t, s, validRun)
	assert.Equal(t, storeweb.Broken, r.Verdict)
	assert.Contains(t, r.Broken, "no results.json")
	require.NoError(t, os.WriteFile(path, results, 0o644))
	assert.Equal(t, storeweb.Valid, runAt(t, s, validRun).Verdict)
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// Indexes at once share the store's and the rows' caches (run with -race).
func TestSummaryCachesUnderConcurrentIndexes(t *testing.T) {
	_, srv := serve(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 10 {
				path := "/"
				if (i+j)%2 == 1 {
					path = "/?verdict=broken"
				}
				resp, err := srv.Client().Get(srv.URL + path)
				if assert.NoError(t, err) {
					resp.Body.Close()
					assert.Equal(t, 200, resp.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	_, _, body := get(t, srv, "/")
	assert.Len(t, listed(body), 6)
}
