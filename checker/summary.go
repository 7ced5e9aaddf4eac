package checker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"chaos/history/faultrec"
	"chaos/internal/atomicfile"
	"chaos/internal/inputfile"
)

// SummaryFile is the file that WriteResults writes beside every
// results.json it writes (docs/FORMATS.md, "summary.json").
const SummaryFile = "summary.json"

// maxSummaryBytes bounds a summary.json that ReadSummary reads: a summary
// holds a few hundred bytes, a few KiB with many fault families.
const maxSummaryBytes = 1 << 20

// Summary is summary.json: what a listing of many runs (chaos serve's
// index) shows of a results.json, so that it reads a few hundred bytes of
// each run instead of every check's details.
//
// A summary is only as good as its results.json: ResultsSize is the size
// of the results.json it was made from, and a summary whose ResultsSize is
// not the size of the results.json beside it is stale (a crash, or a
// reader, between WriteResults' two writes; a results.json written by
// something else) and must not be used.
type Summary struct {
	// ResultsSize is the size in bytes of the results.json summarized.
	ResultsSize int64 `json:"results_size"`
	// Valid is results.json's merged verdict.
	Valid Validity `json:"valid"`
	// Checks is each check's verdict by name; a check whose verdict cannot
	// be read is Unknown. Never nil.
	Checks map[string]Validity `json:"checks"`
	Ops    Counts              `json:"ops"`
	// The fields chaos run writes (docs/FORMATS.md, results.json); zero
	// when results.json has none (chaos check on a bare history).
	Name          string   `json:"name"`
	Seed          uint64   `json:"seed"`
	Started       string   `json:"started"`
	DurationS     float64  `json:"duration_s"`
	Interrupted   bool     `json:"interrupted"`
	FirstAnomalyS *float64 `json:"first_anomaly_s,omitempty"`
	// Faults counts the nemesis transitions that start a fault, by family,
	// in the order the families first struck. Never nil.
	Faults []FaultCount `json:"faults"`
}

// FaultCount is how many faults of one family a run started; a start that
// failed counts too: it was tried.
type FaultCount struct {
	Family string `json:"family"`
	Count  int    `json:"count"`
}

// summarizedResults is the part of results.json a Summary is made of.
type summarizedResults struct {
	Valid         Validity                   `json:"valid"`
	Checks        map[string]json.RawMessage `json:"checks"`
	Ops           Counts                     `json:"ops"`
	Name          string                     `json:"name"`
	Seed          uint64                     `json:"seed"`
	Started       string                     `json:"started"`
	DurationS     float64                    `json:"duration_s"`
	Interrupted   bool                       `json:"interrupted"`
	FirstAnomalyS *float64                   `json:"first_anomaly_s"`
	Nemesis       struct {
		Transitions []struct {
			F string `json:"f"`
		} `json:"transitions"`
	} `json:"nemesis"`
}

// Summarize makes the Summary of results, the content of a results.json,
// ResultsSize its length. Content that is not a JSON object, or whose
// summarized fields do not have their types, is an error saying what is
// wrong (encoding/json's words).
func Summarize(results []byte) (Summary, error) {
	var r summarizedResults
	if err := json.Unmarshal(results, &r); err != nil {
		return Summary{}, err
	}
	if bytes.Equal(bytes.TrimSpace(results), []byte("null")) {
		return Summary{}, errors.New("null is not a JSON object")
	}
	s := Summary{ResultsSize: int64(len(results)), Valid: r.Valid, Checks: make(map[string]Validity, len(r.Checks)),
		Ops: r.Ops, Name: r.Name, Seed: r.Seed, Started: r.Started, DurationS: r.DurationS,
		Interrupted: r.Interrupted, FirstAnomalyS: r.FirstAnomalyS, Faults: []FaultCount{}}
	for name, raw := range r.Checks {
		var c struct {
			Valid Validity `json:"valid"`
		}
		if json.Unmarshal(raw, &c) != nil {
			c.Valid = Unknown
		}
		s.Checks[name] = c.Valid
	}
	for _, tr := range r.Nemesis.Transitions {
		s.Faults = countFault(s.Faults, faultrec.StartedFamily(tr.F))
	}
	return s, nil
}

// countFault counts a start of family in counts; "" (no start) is not
// counted.
func countFault(counts []FaultCount, family string) []FaultCount {
	if family == "" {
		return counts
	}
	for i := range counts {
		if counts[i].Family == family {
			counts[i].Count++
			return counts
		}
	}
	return append(counts, FaultCount{Family: family, Count: 1})
}

// SummarizeFile makes the Summary of the results.json at path, read whole
// (up to the bound WriteResults reads): how a reader summarizes a run
// written before summaries were. Errors name path.
func SummarizeFile(path string) (Summary, error) {
	b, err := inputfile.ReadFile(path, maxResultsBytes)
	if err != nil {
		return Summary{}, err
	}
	s, err := Summarize(b)
	if err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ReadSummary reads the summary.json at path. A file that is missing,
// unreadable, over 1 MiB or not a summary (not JSON, a field of the wrong
// type, no results_size or no verdict) is an error; it does not say
// whether the summary is stale (see Summary).
func ReadSummary(path string) (Summary, error) {
	b, err := inputfile.ReadFile(path, maxSummaryBytes)
	if err != nil {
		return Summary{}, err
	}
	var s struct {
		Summary
		ResultsSize *int64    `json:"results_size"`
		Valid       *Validity `json:"valid"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	if s.ResultsSize == nil || s.Valid == nil {
		return Summary{}, fmt.Errorf("%s: no results_size or no valid: not a summary", path)
	}
	s.Summary.ResultsSize, s.Summary.Valid = *s.ResultsSize, *s.Valid
	if s.Summary.Checks == nil {
		s.Summary.Checks = map[string]Validity{}
	}
	if s.Summary.Faults == nil {
		s.Summary.Faults = []FaultCount{}
	}
	return s.Summary, nil
}

// writeSummary writes summary.json beside the results.json at path, which
// holds results, atomically. When results cannot be summarized (a field a
// hand edit gave the wrong type) it removes summary.json instead, so that
// no summary of an older results.json stays.
func writeSummary(path string, results []byte) error {
	summaryPath := filepath.Join(filepath.Dir(path), SummaryFile)
	s, err := Summarize(results)
	if err != nil {
		if err := os.Remove(summaryPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("summary: %w", err)
		}
		return nil
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	if err := atomicfile.WriteFile(summaryPath, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}
