package wal

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTripAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 4096, NoSync: true}
	w, recs, info := openRead(t, dir, opts)
	require.Empty(t, recs)
	assert.Equal(t, RecoveryInfo{}, info)

	rng := rand.New(rand.NewPCG(1, 2))
	var want []Record
	for len(want) < 600 {
		batch := make([]Record, 1+rng.IntN(5))
		for i := range batch {
			data := make([]byte, rng.IntN(300))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			batch[i] = Record{Type: uint8(1 + rng.IntN(255)), Index: rng.Uint64(), Data: data}
		}
		require.NoError(t, w.Save(batch...))
		want = append(want, batch...)
	}
	st := w.Stats()
	assert.Equal(t, uint64(len(want)), st.Records)
	assert.Greater(t, st.Segments, 5, "4 KiB segments must have rotated")
	assert.Equal(t, st.Segments, len(segmentFiles(t, dir)))
	assert.Equal(t, dirBytes(t, dir), st.Bytes)

	_, got, info := reopen(t, w, opts)
	requireSameRecords(t, want, got)
	assert.Equal(t, st.Segments, info.Segments)
	assert.Equal(t, len(want), info.Records)
	assert.Zero(t, info.TruncatedBytes)
	assert.Empty(t, info.TruncatedSegment)
}

// dirBytes sums the bytes of the records in the segment files in dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, name := range segmentFiles(t, dir) {
		recs, _ := decodeFile(t, filepath.Join(dir, name))
		n += SyncBlockBytes + recordBytes(recs)
	}
	return n
}

func TestSegmentsAreCutOnlyPastSegmentBytes(t *testing.T) {
	dir := t.TempDir()
	rec := entry(1)
	size := int64(encodedSize(rec))
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 3 * size, NoSync: true})
	for i := range 7 {
		require.NoError(t, w.Save(entry(uint64(i+1))))
	}
	// Segments of exactly three records: 3 + 3 + 1.
	names := segmentFiles(t, dir)
	require.Len(t, names, 3)
	for i, name := range names {
		recs, _ := decodeFile(t, filepath.Join(dir, name))
		assert.Len(t, recs, []int{3, 3, 1}[i], name)
	}
	// The name carries the index of the record the segment was cut for.
	assert.Equal(t, segmentName(1, 0), names[0])
	assert.Equal(t, segmentName(2, 4), names[1])
	assert.Equal(t, segmentName(3, 7), names[2])
}

func TestRotationWritesHeaderRecords(t *testing.T) {
	dir := t.TempDir()
	opts := headerOpts(200)
	w, _, _ := openRead(t, dir, opts)
	hs := func(term int) Record { return Record{Type: hardState, Data: []byte{byte(term)}} }
	snap := Record{Type: snapMark, Index: 3, Data: []byte("snap@3")}

	require.NoError(t, w.Save(hs(1), entry(1), entry(2)))
	require.NoError(t, w.Save(snap))
	for i := uint64(3); i <= 30; i++ {
		if i%7 == 0 {
			require.NoError(t, w.Save(hs(int(i)), entry(i)))
		} else {
			require.NoError(t, w.Save(entry(i)))
		}
	}
	names := segmentFiles(t, dir)
	require.Greater(t, len(names), 4)

	// Replaying the files one by one, every segment after the first must
	// start with the latest hard state and snapshot marker that preceded it.
	var latestHS, latestSnap *Record
	for i, name := range names {
		recs, _ := decodeFile(t, filepath.Join(dir, name))
		if i > 0 {
			require.GreaterOrEqual(t, len(recs), 3, name)
			requireSameRecords(t, []Record{*latestHS, *latestSnap}, recs[:2])
		}
		for _, r := range recs {
			switch r.Type {
			case hardState:
				latestHS = &r
			case snapMark:
				latestSnap = &r
			}
		}
	}

	_, got, _ := reopen(t, w, opts)
	hsRecs := onlyType(got, hardState)
	assert.Equal(t, []byte{28}, hsRecs[len(hsRecs)-1].Data, "the last hard state replayed is the latest")
	entries := onlyType(got, entryType)
	require.Len(t, entries, 30)
	for i, e := range entries {
		assert.Equal(t, uint64(i+1), e.Index)
	}
}

func TestReopenAfterCloseAppendsToLastSegment(t *testing.T) {
	dir := t.TempDir()
	opts := Options{NoSync: true}
	w, _, _ := openRead(t, dir, opts)
	require.NoError(t, w.Save(entry(1), entry(2)))
	w, got, _ := reopen(t, w, opts)
	requireSameRecords(t, []Record{entry(1), entry(2)}, got)
	require.NoError(t, w.Save(entry(3)))
	_, got, info := reopen(t, w, opts)
	requireSameRecords(t, []Record{entry(1), entry(2), entry(3)}, got)
	assert.Equal(t, 1, info.Segments)
}

func TestRecordsWithEmptyData(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{NoSync: true})
	want := []Record{{Type: 9}, {Type: 255, Index: 1<<64 - 1}}
	require.NoError(t, w.Save(want...))
	_, got, _ := reopen(t, w, Options{NoSync: true})
	requireSameRecords(t, want, got)
}

func TestSaveRejectsInvalidRecords(t *testing.T) {
	w, _, _ := openRead(t, t.TempDir(), Options{NoSync: true})
	err := w.Save(entry(1), Record{Type: 0, Index: 7})
	require.ErrorIs(t, err, errZeroType)
	assert.Contains(t, err.Error(), "index 7")

	err = w.Save(Record{Type: 1, Data: make([]byte, MaxRecordBytes+1)})
	require.ErrorIs(t, err, errRecordTooLarge)

	assert.Zero(t, w.Stats().Records, "a rejected call writes none of its records")
	require.NoError(t, w.Save(entry(1)))
}

func TestSaveCopiesData(t *testing.T) {
	w, _, _ := openRead(t, t.TempDir(), Options{NoSync: true})
	data := []byte("before")
	require.NoError(t, w.Save(Record{Type: 1, Data: data}))
	copy(data, "AFTER!")
	_, got, _ := reopen(t, w, Options{NoSync: true})
	assert.Equal(t, "before", string(got[0].Data))
}

func TestLifecycleErrors(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err)

	err = w.Save(entry(1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ReadAll must be called first")
	require.ErrorContains(t, w.Write(entry(1)), "ReadAll must be called first")
	require.Error(t, w.Compact(1))

	_, _, err = w.ReadAll()
	require.NoError(t, err)
	_, _, err = w.ReadAll()
	require.ErrorContains(t, err, "ReadAll was already called")

	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Save(entry(1)), ErrClosed)
	require.ErrorIs(t, w.Write(entry(1)), ErrClosed)
	require.ErrorIs(t, w.Compact(1), ErrClosed)
	_, _, err = w.ReadAll()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, w.Close(), ErrClosed)
}

func TestOpenRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]Options{
		"negative segment size": {SegmentBytes: -1},
		"header type 0":         {HeaderTypes: []uint8{0}},
		"duplicate header type": {HeaderTypes: []uint8{2, 2}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(t.TempDir(), opts)
			require.Error(t, err)
		})
	}
}

func TestOpenFailsOnUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := Open(file, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), file)
}

func TestFailedSyncFailsTheBatchAndLaterSaves(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{})
	require.NoError(t, err)
	_, _, err = w.ReadAll()
	require.NoError(t, err)
	require.NoError(t, w.Save(entry(1)))

	injected := errors.New("injected EIO")
	w.syncFile = func(*os.File) error { return injected }
	err = w.Save(entry(2))
	require.ErrorIs(t, err, injected)
	assert.Contains(t, err.Error(), "fsync")

	w.syncFile = (*os.File).Sync
	err = w.Save(entry(3))
	require.ErrorIs(t, err, injected, "the WAL stays failed after a failed fsync")
	assert.Contains(t, err.Error(), "reopen")
	require.ErrorIs(t, w.Compact(0), injected)

	// What reached the file is recovered after reopening.
	_, got, _ := reopen(t, w, Options{})
	requireSameRecords(t, []Record{entry(1), entry(2)}, got)
}

func TestLogsTornTailWarning(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{NoSync: true})
	require.NoError(t, w.Save(entry(1)))
	require.NoError(t, w.Close())
	appendBytes(t, filepath.Join(dir, segmentFiles(t, dir)[0]), []byte{1, 2, 3})

	var logs bytes.Buffer
	_, _, info := openRead(t, dir, Options{NoSync: true, Logger: newTextLogger(&logs)})
	assert.Equal(t, int64(3), info.TruncatedBytes)
	assert.True(t, strings.Contains(logs.String(), "torn tail truncated"), logs.String())
}

func TestSaveOfNothing(t *testing.T) {
	w, _, _ := openRead(t, t.TempDir(), Options{NoSync: true})
	require.NoError(t, w.Save())
	assert.Zero(t, w.Stats().Records)
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Save(), ErrClosed)
}

func TestReadAllCanBeRetriedAfterFailure(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 1, NoSync: true})
	require.NoError(t, w.Save(entry(1)))
	require.NoError(t, w.Save(entry(2)))
	require.NoError(t, w.Save(entry(3)))
	require.NoError(t, w.Close())
	names := segmentFiles(t, dir)
	moved := filepath.Join(t.TempDir(), names[1])
	require.NoError(t, os.Rename(filepath.Join(dir, names[1]), moved))

	w, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err)
	defer w.Close()
	_, _, err = w.ReadAll()
	require.ErrorIs(t, err, ErrCorrupt)

	require.NoError(t, os.Rename(moved, filepath.Join(dir, names[1])))
	got, _, err := w.ReadAll()
	require.NoError(t, err)
	requireSameRecords(t, []Record{entry(1), entry(2), entry(3)}, got)
	require.NoError(t, w.Save(entry(4)))
}
