package eventlog

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/internal/inputfile"
)

// allocated is the bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A 2 GiB events.jsonl of zeros (a sparse file, no disk) is refused at its
// first line, after reading about a MiB of it: the reader never holds more
// than a line.
func TestReadEventsStopsAtAnOverlongLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Truncate(p, 2<<30))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	start := time.Now()
	var rerr error
	alloc := allocated(func() { _, _, rerr = ReadEvents(f) })
	require.EqualError(t, rerr, "events line 1: longer than 1048576 bytes")
	assert.Less(t, time.Since(start), time.Second)
	assert.Less(t, alloc, uint64(16<<20))
	off, err := f.Seek(0, 1)
	require.NoError(t, err)
	assert.Less(t, off, int64(2<<20), "read no further than the line bound")
}

// A line of exactly the bound is read; one byte more is refused, whether
// the line ends the file or not.
func TestReadEventsLineBound(t *testing.T) {
	start := `{"time":"2026-11-22T10:00:00Z","event":"start","node":"n1","bugs":"`
	line := start + strings.Repeat("x", maxEventLine-len(start)-2) + `"}`
	require.Len(t, line, maxEventLine)
	evs, _, err := ReadEvents(strings.NewReader(line + "\n"))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	_, _, err = ReadEvents(strings.NewReader(line))
	require.NoError(t, err, "the last line without a newline")
	long := start + strings.Repeat("x", maxEventLine-len(start)-1) + `"}`
	for _, in := range []string{long + "\n", long, line + "\n" + long + "\n"} {
		_, _, err = ReadEvents(bytes.NewReader([]byte(in)))
		require.ErrorContains(t, err, "longer than 1048576 bytes")
	}
}

// An events.jsonl that is a link to /dev/zero is refused before any read.
func TestLoadRunRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nodes", "n1", FileName)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.Symlink("/dev/zero", p))
	start := time.Now()
	_, _, err := LoadRun(dir)
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.EqualError(t, err, "read "+p+": it is a character device, not a regular file: give a file")
	assert.Less(t, time.Since(start), time.Second)
}
