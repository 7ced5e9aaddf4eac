package wal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fiveEntries makes a WAL in a new directory holding entries 1..5 in one
// segment and returns the directory and the segment's path.
func fiveEntries(t *testing.T) (dir, seg string) {
	t.Helper()
	dir = t.TempDir()
	w, _, _ := openRead(t, dir, Options{NoSync: true})
	for i := uint64(1); i <= 5; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	require.NoError(t, w.Close())
	return dir, filepath.Join(dir, segmentFiles(t, dir)[0])
}

func entries(from, to uint64) []Record {
	var out []Record
	for i := from; i <= to; i++ {
		out = append(out, entry(i))
	}
	return out
}

func TestTornTailAtEveryByteIsTruncated(t *testing.T) {
	base, seg := fiveEntries(t)
	full, err := os.ReadFile(seg)
	require.NoError(t, err)
	lastLen := encodedSize(entry(5))
	valid := len(full) - lastLen

	for cut := 1; cut < lastLen; cut++ {
		t.Run(fmt.Sprintf("keep %d of %d bytes", cut, lastLen), func(t *testing.T) {
			dir := copyDir(t, base)
			path := filepath.Join(dir, filepath.Base(seg))
			require.NoError(t, os.Truncate(path, int64(valid+cut)))

			w, got, info := openRead(t, dir, Options{NoSync: true})
			requireSameRecords(t, entries(1, 4), got)
			// Torn bytes that are all zero read as preallocated space.
			want := RecoveryInfo{Segments: 1, Records: 4}
			if damaged := dataEnd(full[:valid+cut], valid) - valid; damaged > 0 {
				want.TruncatedSegment, want.TruncatedOffset, want.TruncatedBytes = filepath.Base(seg), int64(valid), int64(damaged)
			}
			assert.Equal(t, want, info)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, valid, dataEnd(data, valid), "the torn bytes are gone from the file")

			require.NoError(t, w.Save(entry(5), entry(6)))
			_, got, info = reopen(t, w, Options{NoSync: true})
			requireSameRecords(t, entries(1, 6), got)
			assert.Zero(t, info.TruncatedBytes)
		})
	}
}

// A zero tail is the preallocated space of a WAL that was not closed (or
// appended bytes that never reached the disk): no damage, and the next
// record goes right after the last one.
func TestZeroTailIsPreallocatedSpace(t *testing.T) {
	dir, seg := fiveEntries(t)
	appendBytes(t, seg, make([]byte, 4096))
	var logs bytes.Buffer
	w, got, info := openRead(t, dir, Options{NoSync: true, Logger: newTextLogger(&logs)})
	requireSameRecords(t, entries(1, 5), got)
	assert.Equal(t, RecoveryInfo{Segments: 1, Records: 5}, info)
	assert.NotContains(t, logs.String(), "torn tail")
	assert.Contains(t, logs.String(), "wal zero bytes after the last record", "not this WAL's preallocation: logged")
	require.NoError(t, w.Save(entry(6)))
	_, got, _ = reopen(t, w, Options{NoSync: true})
	requireSameRecords(t, entries(1, 6), got)
}

func TestTornRecordFollowedByZerosIsTruncated(t *testing.T) {
	dir, seg := fiveEntries(t)
	partial := encodeRecord(nil, entry(6))[:10]
	appendBytes(t, seg, append(partial, make([]byte, 100)...))
	_, got, info := openRead(t, dir, Options{NoSync: true})
	requireSameRecords(t, entries(1, 5), got)
	assert.Equal(t, int64(10), info.TruncatedBytes, "the damage, not the zeros after it")
}

func TestBadChecksumInFinalRecordIsTruncated(t *testing.T) {
	dir, seg := fiveEntries(t)
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	data[len(data)-1] ^= 0x01
	require.NoError(t, os.WriteFile(seg, data, 0o644))

	_, got, info := openRead(t, dir, Options{NoSync: true})
	requireSameRecords(t, entries(1, 4), got)
	assert.Equal(t, int64(encodedSize(entry(5))), info.TruncatedBytes)
}

func TestFlippedByteInMiddleRecordIsCorrupt(t *testing.T) {
	base, seg := fiveEntries(t)
	orig, err := os.ReadFile(seg)
	require.NoError(t, err)
	_, offsets := decodeFile(t, seg)
	start, end := offsets[2], offsets[3] // the third of five records

	for i := start; i < end; i++ {
		t.Run(fmt.Sprintf("byte %d", i), func(t *testing.T) {
			dir := copyDir(t, base)
			path := filepath.Join(dir, filepath.Base(seg))
			data := append([]byte(nil), orig...)
			data[i] ^= 0xff
			require.NoError(t, os.WriteFile(path, data, 0o644))

			w, err := Open(dir, Options{NoSync: true})
			require.NoError(t, err)
			defer w.Close()
			_, _, err = w.ReadAll()
			require.ErrorIs(t, err, ErrCorrupt)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), fmt.Sprintf("byte offset %d ", start))
			require.ErrorContains(t, w.Save(entry(6)), "ReadAll must be called first", "no writes into a corrupt log")

			after, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, data, after, "a corrupt log is never truncated")
		})
	}
}

func TestBadRecordInEarlierSegmentIsCorrupt(t *testing.T) {
	for name, damage := range map[string]func(data []byte) []byte{
		"flipped byte": func(data []byte) []byte { data[len(data)-3] ^= 0x10; return data },
		"torn tail":    func(data []byte) []byte { return data[:len(data)-4] },
		"zero tail":    func(data []byte) []byte { return append(data, 0, 0, 0, 0, 0, 0, 0, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w, _, _ := openRead(t, dir, Options{SegmentBytes: 100, NoSync: true})
			for i := uint64(1); i <= 20; i++ {
				require.NoError(t, w.Save(entry(i)))
			}
			require.NoError(t, w.Close())
			names := segmentFiles(t, dir)
			require.Greater(t, len(names), 2)
			path := filepath.Join(dir, names[1])
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, damage(data), 0o644))

			w, err = Open(dir, Options{NoSync: true})
			require.NoError(t, err)
			defer w.Close()
			_, _, err = w.ReadAll()
			require.ErrorIs(t, err, ErrCorrupt)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), "byte offset")
			assert.Contains(t, err.Error(), "not the last")
		})
	}
}

func TestMissingSegmentIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 100, NoSync: true})
	for i := uint64(1); i <= 20; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	require.NoError(t, w.Close())
	names := segmentFiles(t, dir)
	require.NoError(t, os.Remove(filepath.Join(dir, names[1])))

	w, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err)
	defer w.Close()
	_, _, err = w.ReadAll()
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), names[2])
}

func TestUnfinishedSegmentCutIsRemoved(t *testing.T) {
	dir, _ := fiveEntries(t)
	tmp := filepath.Join(dir, segmentName(2, 6)+tempExt)
	require.NoError(t, os.WriteFile(tmp, []byte("half a header"), 0o644))
	stray := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(stray, nil, 0o644))

	w, got, _ := openRead(t, dir, Options{NoSync: true})
	requireSameRecords(t, entries(1, 5), got)
	assert.NoFileExists(t, tmp)
	assert.FileExists(t, stray, "files that are not the WAL's are left alone")
	require.NoError(t, w.Save(entry(6)))
	_, got, _ = reopen(t, w, Options{NoSync: true})
	requireSameRecords(t, entries(1, 6), got)
}

func TestEmptyLastSegmentIsValid(t *testing.T) {
	dir, _ := fiveEntries(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, segmentName(2, 6)), nil, 0o644))
	w, got, info := openRead(t, dir, Options{NoSync: true})
	requireSameRecords(t, entries(1, 5), got)
	assert.Equal(t, 2, info.Segments)
	assert.True(t, info.Lost, "no segment is made without its sync block: the file was damaged")
	require.NoError(t, w.Save(entry(6)))
	_, got, _ = reopen(t, w, Options{NoSync: true})
	requireSameRecords(t, entries(1, 6), got)
}
