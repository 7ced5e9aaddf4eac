package eventlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Flush puts an event in the file at once, without waiting for the
// periodic flush: what a node relies on for votes and role changes.
func TestWriterFlushWritesAtOnce(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, "n1")
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()) }()
	w.Emit(Event{Event: KindVote, Term: 3, For: "n2"})
	w.Flush()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	require.Contains(t, string(b), `"event":"vote","node":"n1","term":3,"for":"n2"`)
}

// The buffer is written out at line boundaries only, however many events
// fill it; a torn last line left by an earlier life is ended on open.
func TestWriterWritesWholeLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	require.NoError(t, os.WriteFile(path, []byte(`{"time":"2026-01-01T00:00:00Z","node":"n1","event":"start"}`+"\n"+`{"time":"2026-01-0`), 0o644))
	w, err := Open(dir, "n1")
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()) }()
	for i := range 2000 { // about three buffers' worth
		w.Emit(Event{Event: KindApply, Index: uint64(i), Hash: "0123456789abcdef"})
		w.mu.Lock() // no flush is writing: a read may see half of a write(2) in progress
		b, err := os.ReadFile(path)
		w.mu.Unlock()
		require.NoError(t, err)
		require.Equal(t, byte('\n'), b[len(b)-1], "after event %d the file ends mid-line", i)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "{\"time\":\"2026-01-0\n{", "the torn line ends before the new life's first event")
}
