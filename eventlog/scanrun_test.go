package eventlog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collect reads runDir with ScanRunOf (kinds nil: ScanRun).
func collect(t *testing.T, runDir string, kinds []Kind) ([]Event, error) {
	t.Helper()
	var evs []Event
	scan := func(node string, e *Event) error {
		assert.Equal(t, node, e.Node, "each node's log is in its directory")
		evs = append(evs, *e)
		return nil
	}
	var err error
	if kinds == nil {
		_, err = ScanRun(runDir, scan)
	} else {
		_, err = ScanRunOf(runDir, kinds, scan)
	}
	return evs, err
}

// ScanRunOf gives the events of the kinds named that ScanRun gives, no
// other, in the same order.
func TestScanRunOfGivesTheKindsNamed(t *testing.T) {
	kinds := []Kind{KindRole, KindStart, KindStop}
	for _, run := range []string{"clean", "real/forget-vote", "livelock-004"} {
		dir := filepath.Join(raftcheckData, run)
		all, err := collect(t, dir, nil)
		require.NoError(t, err)
		some, err := collect(t, dir, kinds)
		require.NoError(t, err)
		want := slices.DeleteFunc(all, func(e Event) bool { return !slices.Contains(kinds, e.Event) })
		require.NotEmpty(t, want, run)
		assert.Equal(t, want, some, run)
	}
}

// The lines ScanRunOf does not decode are only whole lines of another
// kind: a torn one in the middle of a life is still an error, and a kind
// written with an escape is decoded. A bad line of another kind goes
// unnoticed, as its doc says.
func TestScanRunOfSkipsOnlyWholeLinesOfOtherKinds(t *testing.T) {
	write := func(lines string) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "nodes", "n1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes", "n1", FileName), []byte(lines), 0o644))
		return dir
	}
	const start = `{"time":"2026-01-01T00:00:00Z","event":"start","node":"n1"}` + "\n"
	torn := write(start + `{"time":"2026-01-01T00:00:01Z","event":"apply","node":"n1","ind` + "\n" +
		`{"time":"2026-01-01T00:00:02Z","event":"commit","node":"n1","index":1}` + "\n")
	_, err := collect(t, torn, []Kind{KindRole})
	assert.ErrorContains(t, err, "events line 2")

	escaped := write(start + `{"time":"2026-01-01T00:00:01Z","event":"rol\u0065","node":"n1","role":"leader","term":1}` + "\n")
	evs, err := collect(t, escaped, []Kind{KindRole})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, Leader, evs[0].Role)

	bad := write(start + `{"time":"2026-01-01T00:00:01Z","event":"apply","node":"n1","index":x}` + "\n" +
		`{"time":"2026-01-01T00:00:02Z","event":"commit","node":"n1","index":1}` + "\n")
	_, err = collect(t, bad, nil)
	assert.ErrorContains(t, err, "events line 2")
	evs, err = collect(t, bad, []Kind{KindStart})
	require.NoError(t, err, "an apply line ScanRunOf does not decode")
	assert.Len(t, evs, 1)
}
