package checker

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireSummaryOf reads the summary.json beside the results.json at path
// and requires it to be the summary of that results.json as it is now.
func requireSummaryOf(t *testing.T, path string) Summary {
	t.Helper()
	results, err := os.ReadFile(path)
	require.NoError(t, err)
	want, err := Summarize(results)
	require.NoError(t, err)
	got, err := ReadSummary(filepath.Join(filepath.Dir(path), SummaryFile))
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, int64(len(results)), got.ResultsSize)
	return got
}

func TestWriteResultsWritesTheSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	r, err := CheckAll(context.Background(), load(t, "register/valid-sequential.jsonl"), Options{})
	require.NoError(t, err)
	_, err = WriteResults(path, r)
	require.NoError(t, err)
	s := requireSummaryOf(t, path)
	assert.Equal(t, Valid, s.Valid)
	assert.Equal(t, Counts{Invoke: 4, OK: 4}, s.Ops)
	assert.Equal(t, Valid, s.Checks["linearizable"])
	assert.Empty(t, s.Name, "chaos check on a bare history: no run fields")
	assert.Equal(t, []FaultCount{}, s.Faults)
}

// chaos run writes its fields first, then the checks; chaos check rewrites
// the checks later. The summary follows every write, and a summary of an
// older results.json does not survive.
func TestWriteResultsRewritesTheSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	run := `{"name": "reg", "seed": 42, "started": "2026-01-02T00:00:00Z", "duration_s": 61.5, "first_anomaly_s": 3.5,
	  "nemesis": {"transitions": [{"time_s": 1, "f": "kill"}, {"time_s": 2, "f": "start-partition"}, {"time_s": 3, "f": "stop-partition"},
	    {"time_s": 4, "f": "start-partition"}]},
	  "checks": {"raft": {"valid": false, "anomalies": ["two leaders in term 3"]}}}`
	require.NoError(t, os.WriteFile(path, []byte(run), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), SummaryFile), []byte(`{"results_size": 1, "valid": true}`), 0o644))
	r, err := CheckAll(context.Background(), load(t, "register/valid-sequential.jsonl"), Options{})
	require.NoError(t, err)

	_, err = WriteResults(path, r)
	require.NoError(t, err)
	s := requireSummaryOf(t, path)
	assert.Equal(t, Invalid, s.Valid)
	assert.Equal(t, map[string]Validity{"raft": Invalid, "linearizable": Valid, "stats": Valid}, s.Checks)
	assert.Equal(t, "reg", s.Name)
	assert.Equal(t, uint64(42), s.Seed)
	assert.Equal(t, "2026-01-02T00:00:00Z", s.Started)
	assert.Equal(t, 61.5, s.DurationS)
	require.NotNil(t, s.FirstAnomalyS)
	assert.Equal(t, 3.5, *s.FirstAnomalyS)
	assert.Equal(t, []FaultCount{{"kill", 1}, {"partition", 2}}, s.Faults)

	r.Checks["linearizable"] = Result{Valid: Unknown}
	r.Ops = Counts{Invoke: 9}
	_, err = WriteResults(path, r)
	require.NoError(t, err)
	s = requireSummaryOf(t, path)
	assert.Equal(t, Unknown, s.Checks["linearizable"])
	assert.Equal(t, Counts{Invoke: 9}, s.Ops)
}

// A results.json whose run fields a hand edit broke is still checked; its
// summary cannot be made, so the old one goes and readers use
// results.json.
func TestWriteResultsRemovesASummaryItCannotMake(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	summary := filepath.Join(filepath.Dir(path), SummaryFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"seed": "forty-two"}`), 0o644))
	require.NoError(t, os.WriteFile(summary, []byte(`{"results_size": 1, "valid": true}`), 0o644))
	valid, err := WriteResults(path, Report{Checks: map[string]Result{"stats": {Valid: Valid}}})
	require.NoError(t, err)
	assert.Equal(t, Valid, valid)
	assert.NoFileExists(t, summary)
}

func TestSummarize(t *testing.T) {
	s, err := Summarize([]byte(`{"valid": "unknown", "checks": {"a": {"valid": "maybe"}, "b": [1], "c": {"valid": false}},
	  "nemesis": {"transitions": [{"f": "pause"}, {"f": "resume"}, {"f": "start-clock-bump"}, {"f": "pause"}]}}`))
	require.NoError(t, err)
	assert.Equal(t, Unknown, s.Valid)
	assert.Equal(t, map[string]Validity{"a": Unknown, "b": Unknown, "c": Invalid}, s.Checks, "a verdict that cannot be read is unknown")
	assert.Equal(t, []FaultCount{{"pause", 2}, {"clock-bump", 1}}, s.Faults)

	for _, bad := range []string{"", "null", "[1]", `"x"`, "{not json", `{"valid": "maybe"}`, `{"ops": []}`, `{"nemesis": {"transitions": {}}}`} {
		_, err := Summarize([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestReadSummaryRefusesWhatIsNotASummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), SummaryFile)
	_, err := ReadSummary(path)
	assert.ErrorIs(t, err, os.ErrNotExist)
	for _, bad := range []string{"", "{not json", "{}", `{"valid": true}`, `{"results_size": 10}`,
		`{"results_size": 10, "valid": "maybe"}`, `{"results_size": 10, "valid": null}`, `{"results_size": "10", "valid": true}`,
		`{"results_size": 10, "valid": true, "checks": {"a": 1}}`, `{"results_size": 10, "valid": true, "faults": {}}`} {
		require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
		_, err := ReadSummary(path)
		assert.Error(t, err, bad)
	}
	require.NoError(t, os.WriteFile(path, []byte(`{"results_size": 10, "valid": false}`), 0o644))
	s, err := ReadSummary(path)
	require.NoError(t, err)
	assert.Equal(t, Summary{ResultsSize: 10, Valid: Invalid, Checks: map[string]Validity{}, Faults: []FaultCount{}}, s)
}
