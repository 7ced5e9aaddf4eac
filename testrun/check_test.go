package testrun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
	"chaos/raftcheck"
	"chaos/testrun/runrecord"
)

// CheckFile, which reads the history op by op, reaches the verdicts and
// counts that Check reaches on the parsed history, and hands every op to
// Observe; bad lines and ops that fit no workload are errors a caller can
// tell apart.
func TestCheckFileMatchesCheck(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"register/invalid-stale-read.jsonl", "register/valid-cas-chain.jsonl", "set/recovered.jsonl"} {
		src, err := os.ReadFile(filepath.Join("..", "checker", "testdata", name))
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "history.jsonl")
		require.NoError(t, os.WriteFile(path, src, 0o644))
		f, err := os.Open(path)
		require.NoError(t, err)
		h, _, err := history.Parse(f)
		f.Close()
		require.NoError(t, err)

		want, err := Check(ctx, filepath.Dir(path), h, CheckOptions{})
		require.NoError(t, err, name)
		var observed history.History
		got, warnings, err := CheckFile(ctx, path, CheckOptions{Observe: func(op *history.Op) { observed = append(observed, *op) }})
		require.NoError(t, err, name)
		assert.Empty(t, warnings)
		assert.Equal(t, h, observed, "Observe is handed every op, in order: %s", name)
		assert.Equal(t, want.Valid, got.Valid, name)
		assert.Equal(t, want.Ops, got.Ops, name)
		require.Equal(t, len(want.Checks), len(got.Checks), name)
		for check, res := range want.Checks {
			assert.Equal(t, res.Valid, got.Checks[check].Valid, name+" "+check)
		}
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"read"}`+"\nnope\n"), 0o644))
	_, _, err := CheckFile(ctx, bad, CheckOptions{})
	var pe *history.ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.Line)

	odd := filepath.Join(dir, "odd.jsonl")
	require.NoError(t, os.WriteFile(odd, []byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"increment"}`+"\n"), 0o644))
	_, _, err = CheckFile(ctx, odd, CheckOptions{})
	assert.ErrorIs(t, err, checker.ErrMalformed)
	assert.False(t, errors.As(err, &pe))

	_, _, err = CheckFile(ctx, filepath.Join(dir, "missing.jsonl"), CheckOptions{})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// chaos check on a run directory holds the cluster to test.json's recovery
// bound, and only reports a slow recovery when the bound was advisory.
func TestCheckReadsTheRecoveryBoundOfTheRun(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "raftcheck", "testdata", "history", "recovered.jsonl"))
	require.NoError(t, err)
	for _, advisory := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "history.jsonl")
		require.NoError(t, os.WriteFile(path, src, 0o644))
		rec := runrecord.TestRecord{Name: "t", RecoveryS: 1, RecoveryAdvisory: advisory}
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "test.json"), b, 0o644))

		r, _, err := CheckFile(context.Background(), path, CheckOptions{})
		require.NoError(t, err)
		avail := r.Checks["availability"]
		d := avail.Details.(*raftcheck.AvailabilityDetails)
		if advisory {
			assert.Equal(t, checker.Valid, avail.Valid, "a recovery 1.5 s after the heal, bound 1 s advisory")
			assert.Contains(t, d.SlowRecovery, "1.5s after stop-partition")
		} else {
			assert.Equal(t, checker.Invalid, avail.Valid, "a recovery 1.5 s after the heal, bound 1 s")
			assert.Empty(t, d.SlowRecovery)
		}
	}
}
