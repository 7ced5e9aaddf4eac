package storeweb_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chaos/checker"
	"chaos/storeweb"
	"chaos/testrun/runrecord"
)

// BenchmarkIndex answers GET / (the index: every run, newest first) of a
// store of 10,000 set runs that each lost 69,000 writes: a results.json of
// about 1 MB each, hard links to one file so that the store is cheap to
// make. Target (issue 40): a warm index under 200 ms.
//
//   - summary/warm: runs with summary.json, the server's cache full: no
//     file read, no JSON parsed, a few stats per run.
//   - summary/first: runs with summary.json, a server just started: every
//     summary.json read once.
//   - no-summary/warm: runs from before summary.json, the cache full.
//   - no-summary/first: runs from before summary.json, a server just
//     started: every results.json read whole once, the way every load was
//     before summaries; at 300 runs too, the store of issue 40.
//
// The no-summary cases of 10,000 runs read 10 GB of JSON before they
// measure anything, which takes minutes: -short skips them.
func BenchmarkIndex(b *testing.B) {
	results := benchResults(b)
	for _, c := range []struct {
		name          string
		runs          int
		summary, warm bool
	}{
		{"runs=10000/summary/warm", 10_000, true, true},
		{"runs=10000/summary/first", 10_000, true, false},
		{"runs=10000/no-summary/warm", 10_000, false, true},
		{"runs=10000/no-summary/first", 10_000, false, false},
		{"runs=300/no-summary/first", 300, false, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			if testing.Short() && c.runs > 1000 && !c.summary {
				b.Skip("reads 10 GB of JSON: run without -short")
			}
			store := benchStore(b, results, c.runs, c.summary)
			if c.warm {
				benchWarm(b, store, c.runs)
			} else {
				benchFirst(b, store, c.runs)
			}
		})
	}
}

// benchWarm measures GET / of one server, once its cache is full.
func benchWarm(b *testing.B, store string, runs int) {
	h := benchHandler(b, store)
	benchIndex(b, h, runs)
	b.ReportAllocs()
	for b.Loop() {
		benchIndex(b, h, runs)
	}
}

// benchFirst measures the first GET / of a server just started.
func benchFirst(b *testing.B, store string, runs int) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		h := benchHandler(b, store)
		b.StartTimer()
		benchIndex(b, h, runs)
	}
}

// benchHandler opens store and serves it.
func benchHandler(b *testing.B, store string) http.Handler {
	s, err := storeweb.Open(store)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return storeweb.NewHandler(s)
}

// benchIndex gets / from h and checks that it lists runs runs.
func benchIndex(b *testing.B, h http.Handler, runs int) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != http.StatusOK {
		b.Fatalf("GET /: %d %s", w.Code, w.Body)
	}
	if want := fmt.Sprintf("%d of %d runs", runs, runs); !strings.Contains(w.Body.String(), want) {
		b.Fatalf("GET / does not say %q", want)
	}
}

// benchResults writes the run directory every run of the store links to,
// as chaos run does: its fields into results.json, then the checks with
// checker.WriteResults, which writes summary.json. It returns the
// directory.
func benchResults(b *testing.B) string {
	dir := b.TempDir()
	path := filepath.Join(dir, "results.json")
	run := runrecord.RunSummary{Name: "set-partition", Seed: 7, Started: "2026-01-01T00:00:00Z", DurationS: 300,
		OpsPerS: 700, Leaders: []runrecord.LeaderChange{}}
	for i := range 100 {
		f := "start-partition"
		if i%2 == 1 {
			f = "stop-partition"
		}
		run.Nemesis.Transitions = append(run.Nemesis.Transitions, runrecord.Transition{TimeS: float64(i) * 3, F: f,
			Value: json.RawMessage(`{"n1":["n2","n3"],"n4":["n5"]}`)})
	}
	raw, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	set := checker.SetDetails{Attempts: 210_000, Acknowledged: 200_000, Unexpected: []int64{}, Recovered: []int64{}, Duplicates: []int64{}}
	for e := range int64(69_000) {
		set.Lost = append(set.Lost, 100_000+e)
	}
	report := checker.Report{Ops: checker.Counts{Invoke: 210_001, OK: 200_001, Fail: 9_000, Info: 1_000},
		Checks: map[string]checker.Result{"set": {Valid: checker.Invalid, Details: set}, "stats": {Valid: checker.Valid}}}
	if _, err := checker.WriteResults(path, report); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte("<!DOCTYPE html><title>report</title>\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchStore makes a store of runs run directories, 100 tests of
// runs/100 runs each, whose results.json and report.html (and
// summary.json, when summary) are hard links to those in results.
func benchStore(b *testing.B, results string, runs int, summary bool) string {
	store := b.TempDir()
	files := []string{"results.json", "report.html"}
	if summary {
		files = append(files, checker.SummaryFile)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range runs {
		dir := filepath.Join(store, fmt.Sprintf("set-partition-%02d", i%100), start.Add(time.Duration(i)*time.Second).Format("20060102T150405.000Z"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			if err := os.Link(filepath.Join(results, f), filepath.Join(dir, f)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return store
}
