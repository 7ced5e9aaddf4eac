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
