package node

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// flush puts an event in the file at once, without waiting for the
// periodic flush: what handleReady relies on for votes and role changes.
func TestEventLogFlushWritesAtOnce(t *testing.T) {
	dir := t.TempDir()
	el, err := openEventLog(dir, "n1")
	require.NoError(t, err)
	defer func() { require.NoError(t, el.close()) }()
	el.emit("vote", slog.Uint64("term", 3), slog.String("for", "n2"))
	el.flush()
	b, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(b), `"event":"vote","node":"n1","term":3,"for":"n2"`)
}

// The buffer is written out at line boundaries only, however many events
// fill it; a torn last line left by an earlier life is ended on open.
func TestEventLogWritesWholeLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"time":"2026-01-01T00:00:00Z","node":"n1","event":"start"}`+"\n"+`{"time":"2026-01-0`), 0o644))
	el, err := openEventLog(dir, "n1")
	require.NoError(t, err)
	defer func() { require.NoError(t, el.close()) }()
	for i := range 2000 { // about three buffers' worth
		el.emit("apply", slog.Int("index", i), slog.String("hash", "0123456789abcdef"))
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, byte('\n'), b[len(b)-1], "after event %d the file ends mid-line", i)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "{\"time\":\"2026-01-0\n{", "the torn line ends before the new life's first event")
}
