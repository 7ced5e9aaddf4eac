package wal

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Record types used by the tests. hardState and snapMark are header types in
// headerOpts.
const (
	entryType uint8 = 1
	hardState uint8 = 2
	snapMark  uint8 = 3
)

func headerOpts(segmentBytes int64) Options {
	return Options{SegmentBytes: segmentBytes, HeaderTypes: []uint8{hardState, snapMark}, NoSync: true}
}

// entry is an entry record whose data names its index.
func entry(index uint64) Record {
	return Record{Type: entryType, Index: index, Data: fmt.Appendf(nil, "entry-%d", index)}
}

// openRead opens dir and replays it, failing the test on any error.
func openRead(t *testing.T, dir string, opts Options) (*WAL, []Record, RecoveryInfo) {
	t.Helper()
	w, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	recs, info, err := w.ReadAll()
	require.NoError(t, err)
	return w, recs, info
}

// reopen closes w and replays its directory again with opts.
func reopen(t *testing.T, w *WAL, opts Options) (*WAL, []Record, RecoveryInfo) {
	t.Helper()
	require.NoError(t, w.Close())
	return openRead(t, w.dir, opts)
}

// segmentFiles lists the segment file names in dir in order.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	segs, _, err := listSegments(dir)
	require.NoError(t, err)
	names := make([]string, len(segs))
	for i, s := range segs {
		names[i] = s.name
	}
	return names
}

// decodeFile decodes every record of a segment file up to its
// preallocated zero tail, failing on any damage, and returns them with
// their byte offsets.
func decodeFile(t *testing.T, path string) (recs []Record, offsets []int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for off := SyncBlockBytes; off < dataEnd(data, off); {
		r, n, err := decodeRecord(data[off:])
		require.NoError(t, err, "%s at %d", path, off)
		recs = append(recs, r)
		offsets = append(offsets, off)
		off += n
	}
	return recs, offsets
}

// requireSameRecords compares records, treating nil and empty Data as equal.
func requireSameRecords(t *testing.T, want, got []Record) {
	t.Helper()
	require.Equal(t, len(want), len(got), "record count")
	for i := range want {
		require.Equal(t, want[i].Type, got[i].Type, "type of record %d", i)
		require.Equal(t, want[i].Index, got[i].Index, "index of record %d", i)
		require.True(t, slices.Equal(want[i].Data, got[i].Data), "data of record %d: want %q got %q", i, want[i].Data, got[i].Data)
	}
}

// onlyType returns the records of type typ, in order.
func onlyType(recs []Record, typ uint8) []Record {
	var out []Record
	for _, r := range recs {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// copyDir copies the regular files of src into a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
	return dst
}

// appendBytes appends p to the file at path.
func appendBytes(t *testing.T, path string, p []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(p)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}
