package testrun

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
)

// replay records h again through a recorder (its times from h), so that
// the recorder writes dir/history.jsonl and hands every op to sink.
func replay(t *testing.T, dir string, h history.History, sink func(*history.Op)) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "history.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	next := 0
	clock := func() time.Duration { next++; return time.Duration(h[next-1].Time) }
	rec := history.NewRecorder(f, clock, history.RecorderOptions{PanicOnInvalid: true, Sink: sink})
	open := map[history.Process]history.Pending{}
	for _, op := range h {
		switch {
		case op.Process.IsNemesis():
			require.NoError(t, rec.Nemesis(op.F, json.RawMessage(op.Value)))
		case op.Type == history.Invoke:
			p, err := rec.Invoke(int(op.Process), op.F, op.Key, json.RawMessage(op.Value))
			require.NoError(t, err)
			open[op.Process] = p
		default:
			require.NoError(t, rec.Complete(open[op.Process], history.Outcome{Type: op.Type,
				Value: json.RawMessage(op.Value), Node: op.Node, Error: op.Error}))
		}
	}
	require.NoError(t, rec.Close())
}

// A run's checks, fed each op as the recorder records it, reach what
// Check reaches on the history; the recording keeps the nemesis ops and
// the last op's time, and firstAnomalyIn, reading the history.jsonl the
// recorder wrote, finds what firstAnomaly finds in the history.
func TestRecordingChecksTheHistoryAsItIsRecorded(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"register/invalid-stale-read.jsonl", "set/lost.jsonl", "set/recovered.jsonl"} {
		f, err := os.Open(filepath.Join("..", "checker", "testdata", name))
		require.NoError(t, err)
		h, _, err := history.Parse(f)
		f.Close()
		require.NoError(t, err)
		dir := t.TempDir()
		rec := recording{checks: newChecking(dir, CheckOptions{})}
		replay(t, dir, h, rec.take)
		require.NoError(t, rec.err)
		got, err := rec.checks.report(ctx, dir)
		require.NoError(t, err, name)
		want, err := Check(ctx, t.TempDir(), h, CheckOptions{})
		require.NoError(t, err, name)
		assert.Equal(t, want.Valid, got.Valid, name)
		assert.Equal(t, want.Ops, got.Ops, name)
		for check, res := range want.Checks {
			assert.Equal(t, res.Valid, got.Checks[check].Valid, "%s: %s", name, check)
		}
		assert.Equal(t, []history.Op(h.Nemesis()), []history.Op(rec.nemesis), name)
		assert.Equal(t, h[len(h)-1].Time, rec.last, name)
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		first := firstAnomalyIn(got, scanFile(filepath.Join(dir, "history.jsonl")), start)
		assert.Equal(t, firstAnomaly(want, h, start), first, name)
		assert.Equal(t, want.Valid == checker.Invalid, first != nil, name)
	}
}

// A valid run's summary does not read the history again: the scan of a
// file that does not exist is never called.
func TestFirstAnomalyOfAValidRunReadsNothing(t *testing.T) {
	report, err := Check(context.Background(), t.TempDir(), history.History{}, CheckOptions{Workload: "register"})
	require.NoError(t, err)
	called := false
	assert.Nil(t, firstAnomalyIn(report, func(func(*history.Op) error) error { called = true; return nil }, time.Now()))
	assert.False(t, called)
}
