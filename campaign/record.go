package campaign

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"chaos/internal/atomicfile"
	"chaos/internal/inputfile"
	"chaos/internal/secret"
)

// Record is a campaign's campaign.json: what ran, every run's verdict,
// seed and directory, and each test's outcome and statistics.
type Record struct {
	Campaign    string       `json:"campaign"`
	File        string       `json:"file"`
	Started     string       `json:"started"` // RFC 3339, UTC
	DurationS   float64      `json:"duration_s"`
	Shard       string       `json:"shard"`
	Only        string       `json:"only,omitempty"`
	Interrupted bool         `json:"interrupted"`
	Exit        int          `json:"exit"`
	Tests       []TestResult `json:"tests"`
	// FileSHA256 and FileTests identify the campaign file for Merge: its
	// contents' hash and every test's name in the file's order, whatever
	// the shard ran. Absent in records from before merging existed.
	FileSHA256 string   `json:"file_sha256,omitempty"`
	FileTests  []string `json:"file_tests,omitempty"`
	// MergedFrom are the shards' campaign directories, in shard order, in
	// a record Merge made.
	MergedFrom []string `json:"merged_from,omitempty"`
}

// Names of the files a campaign directory holds.
const (
	RecordFile = "campaign.json"
	JUnitFile  = "junit.xml"
)

// NewDir makes the campaign directory store/campaigns/<name>/<UTC time>/
// and points store/campaigns/<name>/latest at it.
func NewDir(store, name string, now time.Time) (string, error) {
	stamp := now.UTC().Format("20060102T150405.000Z")
	dir := filepath.Join(store, "campaigns", name, stamp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("store %s cannot be written: %w", store, err)
	}
	if err := atomicfile.Symlink(stamp, filepath.Join(store, "campaigns", name, "latest")); err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	return dir, nil
}

// Write writes campaign.json and junit.xml into dir, each atomically,
// with every replay command's secret values redacted (secret.Line).
func (rec Record) Write(dir string) error {
	rec = rec.redacted()
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, RecordFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	err = atomicfile.WriteFunc(filepath.Join(dir, JUnitFile), 0o644, func(w io.Writer) error { return WriteJUnit(w, rec) })
	if err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	return nil
}

// maxRecordBytes bounds a campaign.json that is read: a few KiB per test.
const maxRecordBytes = 64 << 20

// ReadRecord reads the campaign.json in dir, its replay commands
// redacted: also those of a campaign.json written before chaos redacted
// them.
func ReadRecord(dir string) (Record, error) {
	var rec Record
	b, err := inputfile.ReadFile(filepath.Join(dir, RecordFile), maxRecordBytes)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", filepath.Join(dir, RecordFile), err)
	}
	return rec.redacted(), nil
}

// redacted is rec with the secret values of every replay command redacted;
// rec's own tests and runs are left as they are.
func (rec Record) redacted() Record {
	tests := make([]TestResult, len(rec.Tests))
	for i, t := range rec.Tests {
		t.Replay = secret.Line(t.Replay)
		runs := make([]Run, len(t.Runs))
		for j, r := range t.Runs {
			r.Replay = secret.Line(r.Replay)
			runs[j] = r
		}
		if t.Runs != nil {
			t.Runs = runs
		}
		tests[i] = t
	}
	if rec.Tests != nil {
		rec.Tests = tests
	}
	return rec
}

// PrintTable writes the tests as a table: runs, verdicts, expectation,
// outcome, median time to the first anomaly and median throughput.
func PrintTable(w io.Writer, tests []TestResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "test\truns\tvalid\tinvalid\tunknown\tcrashed\texpected\tresult\tfirst anomaly (median)\tops/s (median)")
	for _, t := range tests {
		s := t.Stats
		first := "-"
		if s.FirstAnomalyMedianS != nil {
			first = fmt.Sprintf("%.1f s", *s.FirstAnomalyMedianS)
		}
		result := t.Outcome
		if t.Skipped != "" {
			result = "skipped"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%.0f\n", t.Name, s.Runs, s.Verdicts[Valid], s.Verdicts[Invalid],
			s.Verdicts[Unknown], s.Verdicts[Crashed], t.Expect, result, first, s.OpsPerSMedian)
	}
	tw.Flush()
}
