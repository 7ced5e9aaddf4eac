package checker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

func TestDetectWorkload(t *testing.T) {
	w, err := DetectWorkload(load(t, "register/valid-cas-chain.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, WorkloadRegister, w)
	w, err = DetectWorkload(load(t, "set/valid.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, WorkloadSet, w)

	reads := history.History{{Index: 0, Time: 1, Type: history.Invoke, F: "read", Key: "k"}}
	w, err = DetectWorkload(reads)
	require.NoError(t, err)
	assert.Equal(t, WorkloadRegister, w, "reads alone are a register's")

	mixed := history.History{
		{Index: 0, Time: 1, Type: history.Invoke, F: "write", Value: []byte("1")},
		{Index: 1, Time: 2, Process: 1, Type: history.Invoke, F: "add", Value: []byte("1")},
	}
	_, err = DetectWorkload(mixed)
	assert.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, `mixes workloads: op 0 is a register "write", op 1 a set "add"`)

	odd := history.History{{Index: 0, Time: 1, Type: history.Invoke, F: "increment"}}
	_, err = DetectWorkload(odd)
	assert.ErrorContains(t, err, `f "increment" belongs to no workload`)
}

func TestCheckAll(t *testing.T) {
	ctx := context.Background()
	r, err := CheckAll(ctx, load(t, "register/invalid-stale-read.jsonl"), Options{})
	require.NoError(t, err)
	assert.Equal(t, Invalid, r.Valid)
	assert.Equal(t, Counts{Invoke: 5, OK: 5}, r.Ops)
	assert.Equal(t, Invalid, r.Checks["linearizable"].Valid)
	assert.Equal(t, Valid, r.Checks["stats"].Valid)
	assert.NotContains(t, r.Checks, "set")

	r, err = CheckAll(ctx, load(t, "set/recovered.jsonl"), Options{})
	require.NoError(t, err)
	assert.Equal(t, Valid, r.Valid)
	assert.Contains(t, r.Checks, "set")
	assert.NotContains(t, r.Checks, "linearizable")

	r, err = CheckAll(ctx, load(t, "set/no-final-read.jsonl"), Options{})
	require.NoError(t, err)
	assert.Equal(t, Invalid, r.Valid, "stats: read never succeeded, beats the set's unknown")
	assert.Equal(t, Unknown, r.Checks["set"].Valid)

	_, err = CheckAll(ctx, load(t, "set/valid.jsonl"), Options{Workload: WorkloadRegister})
	assert.ErrorIs(t, err, ErrMalformed, "a forced workload that does not fit")
	_, err = CheckAll(ctx, load(t, "set/valid.jsonl"), Options{Workload: "queue"})
	assert.ErrorContains(t, err, `unknown workload "queue"`)
}

func TestWriteResultsFresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	r, err := CheckAll(context.Background(), load(t, "register/valid-sequential.jsonl"), Options{})
	require.NoError(t, err)
	valid, err := WriteResults(path, r)
	require.NoError(t, err)
	assert.Equal(t, Valid, valid)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^\{\n  "valid": true,\n  "checks": \{`, string(b), "valid comes first")
	var got struct {
		Valid  Validity                   `json:"valid"`
		Ops    Counts                     `json:"ops"`
		Checks map[string]json.RawMessage `json:"checks"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, Valid, got.Valid)
	assert.Equal(t, Counts{Invoke: 4, OK: 4}, got.Ops)
	assert.Contains(t, string(got.Checks["linearizable"]), `"partitions": 1`)
}

// Re-checking a run keeps what the run wrote that the checkers do not own,
// and merges the verdict over every check.
func TestWriteResultsKeepsTheRunsOtherFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	run := `{"valid": true, "name": "chaos-node-register", "seed": 42, "ops": {"invoke": 1},
	  "checks": {"linearizable": {"valid": true}, "raft": {"valid": "unknown", "terms": 3}, "perf": {"p99_ms": 4}}}`
	require.NoError(t, os.WriteFile(path, []byte(run), 0o644))

	r, err := CheckAll(context.Background(), load(t, "register/valid-sequential.jsonl"), Options{})
	require.NoError(t, err)
	valid, err := WriteResults(path, r)
	require.NoError(t, err)
	assert.Equal(t, Unknown, valid, "raft's unknown and perf's missing verdict count")

	var got map[string]json.RawMessage
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	assert.JSONEq(t, `"unknown"`, string(got["valid"]))
	assert.JSONEq(t, `"chaos-node-register"`, string(got["name"]))
	assert.JSONEq(t, `42`, string(got["seed"]))
	assert.JSONEq(t, `{"invoke":4,"ok":4,"fail":0,"info":0}`, string(got["ops"]))
	var checks map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got["checks"], &checks))
	assert.JSONEq(t, `{"valid":"unknown","terms":3}`, string(checks["raft"]))
	assert.Contains(t, string(checks["linearizable"]), `"partitions": 1`)
	assert.Contains(t, checks, "stats")
}

func TestWriteResultsRefusesACorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	for _, content := range []string{"{not json", `[1,2]`, `{"checks": [1]}`} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		_, err := WriteResults(path, Report{Checks: map[string]Result{}})
		assert.ErrorIs(t, err, ErrMalformed, content)
		b, _ := os.ReadFile(path)
		assert.Equal(t, content, string(b), "left alone")
	}
}
