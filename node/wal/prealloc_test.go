package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileSize is the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// The current segment is preallocated while the WAL is open; a cut trims
// the segment it leaves and Close the current one, so every other segment
// and a closed WAL's files hold their records and nothing more.
func TestSegmentsArePreallocatedAndTrimmed(t *testing.T) {
	dir := t.TempDir()
	opts := headerOpts(1024)
	w, _, _ := openRead(t, dir, opts)
	for i := uint64(1); i <= 200; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	names := segmentFiles(t, dir)
	require.Greater(t, len(names), 2, "1 KiB segments must have been cut")
	for i, name := range names {
		path := filepath.Join(dir, name)
		recs, _ := decodeFile(t, path)
		if i == len(names)-1 {
			assert.Equal(t, max(int64(1024), SyncBlockBytes+recordBytes(recs)), fileSize(t, path),
				"the current segment is preallocated (its last record may end past it)")
			continue
		}
		assert.Equal(t, SyncBlockBytes+recordBytes(recs), fileSize(t, path), "%s was trimmed at the cut", name)
	}

	require.NoError(t, w.Close())
	last := filepath.Join(dir, names[len(names)-1])
	recs, _ := decodeFile(t, last)
	assert.Equal(t, SyncBlockBytes+recordBytes(recs), fileSize(t, last), "Close trims the current segment")
}

// A WAL that was not closed (its process died) leaves its preallocated
// zero tail: replay returns every record without reporting damage, and
// the next records go right after the last one.
func TestCrashImageWithPreallocatedTail(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 1 << 20})
	require.NoError(t, w.Save(entries(1, 5)...))
	crashed := copyDir(t, dir) // what the disk holds when the process dies
	seg := filepath.Join(crashed, segmentFiles(t, crashed)[0])
	require.Equal(t, int64(1<<20), fileSize(t, seg))

	var logs bytes.Buffer
	w2, got, info := openRead(t, crashed, Options{SegmentBytes: 1 << 20, Logger: newTextLogger(&logs)})
	requireSameRecords(t, entries(1, 5), got)
	assert.Equal(t, RecoveryInfo{Segments: 1, Records: 5}, info)
	assert.Empty(t, logs.String(), "the WAL's own preallocation is nothing to log")
	require.NoError(t, w2.Save(entry(6)))
	recs, _ := decodeFile(t, seg)
	requireSameRecords(t, entries(1, 6), recs)
	_, got, _ = reopen(t, w2, Options{SegmentBytes: 1 << 20})
	requireSameRecords(t, entries(1, 6), got)
}

// A torn record in the preallocated space (the process died while the
// write was in flight) is damage: truncated and reported, the space after
// it allocated again.
func TestTornRecordInPreallocatedSpace(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 1 << 20})
	require.NoError(t, w.Save(entries(1, 5)...))
	crashed := copyDir(t, dir)
	seg := filepath.Join(crashed, segmentFiles(t, crashed)[0])
	valid := SyncBlockBytes + recordBytes(entries(1, 5))
	f, err := os.OpenFile(seg, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(encodeRecord(nil, entry(6))[:12], valid)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, got, info := openRead(t, crashed, Options{SegmentBytes: 1 << 20})
	requireSameRecords(t, entries(1, 5), got)
	assert.Equal(t, valid, info.TruncatedOffset)
	assert.Positive(t, info.TruncatedBytes)
	assert.False(t, info.Lost, "the torn record was never fsynced")
	assert.Equal(t, int64(1<<20), fileSize(t, seg), "allocated again after the truncation")
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	assert.Equal(t, int(valid), dataEnd(data, int(valid)), "nothing of the torn record is left")
}

// recordBytes is the encoded size of recs.
func recordBytes(recs []Record) (n int64) {
	for _, r := range recs {
		n += int64(encodedSize(r))
	}
	return n
}

func TestDataEnd(t *testing.T) {
	for _, tc := range []struct {
		data     []byte
		off, end int
	}{
		{nil, 0, 0},
		{[]byte{0, 0, 0}, 0, 0},
		{[]byte{1, 0, 0}, 0, 1},
		{[]byte{1, 0, 0}, 1, 1},
		{append([]byte{0, 7}, make([]byte, 21)...), 0, 2},
		{append(append(make([]byte, 17), 9), make([]byte, 16)...), 3, 18},
		{append(make([]byte, 17), 9), 0, 18},
		{make([]byte, 40), 13, 13},
	} {
		assert.Equal(t, tc.end, dataEnd(tc.data, tc.off), "%v from %d", tc.data, tc.off)
	}
}

// A segment the file system cannot preallocate (here: larger than any file
// may be) is logged, and the WAL works without it.
func TestFailedPreallocationIsLoggedAndHarmless(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	opts := Options{SegmentBytes: 1 << 62, Logger: newTextLogger(&logs)}
	w, _, _ := openRead(t, dir, opts)
	assert.Contains(t, logs.String(), "wal segment not preallocated")
	require.NoError(t, w.Save(entries(1, 5)...))
	_, got, info := reopen(t, w, opts)
	requireSameRecords(t, entries(1, 5), got)
	assert.Zero(t, info.TruncatedBytes)
}
