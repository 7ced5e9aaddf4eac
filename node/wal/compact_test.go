package wal

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// segmentIndexes returns, per segment file in dir, the indexes of its entry
// records.
func segmentIndexes(t *testing.T, dir string) map[string][]uint64 {
	t.Helper()
	out := make(map[string][]uint64)
	for _, name := range segmentFiles(t, dir) {
		recs, _ := decodeFile(t, filepath.Join(dir, name))
		out[name] = nil
		for _, r := range onlyType(recs, entryType) {
			out[name] = append(out[name], r.Index)
		}
	}
	return out
}

func TestCompactDeletesOnlyEligibleSegments(t *testing.T) {
	dir := t.TempDir()
	opts := headerOpts(120)
	w, _, _ := openRead(t, dir, opts)
	require.NoError(t, w.Save(Record{Type: hardState, Data: []byte("term 1")}))
	for i := uint64(1); i <= 30; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	snap := Record{Type: snapMark, Index: 12, Data: []byte("snapshot at 12")}
	require.NoError(t, w.Save(snap))
	require.NoError(t, w.Save(entry(31)))

	before := segmentFiles(t, dir)
	idx := segmentIndexes(t, dir)
	var wantKept []string
	deleting := true
	for i, name := range before {
		last := i == len(before)-1
		if deleting && !last && len(idx[name]) > 0 && idx[name][len(idx[name])-1] <= 12 {
			continue
		}
		deleting = false
		wantKept = append(wantKept, name)
	}
	require.Less(t, len(wantKept), len(before), "the test must have something to delete")
	require.Greater(t, len(wantKept), 1, "and something to keep beyond the current segment")

	require.NoError(t, w.Compact(12))
	assert.Equal(t, wantKept, segmentFiles(t, dir))
	st := w.Stats()
	assert.Equal(t, len(wantKept), st.Segments)
	assert.Equal(t, dirBytes(t, dir), st.Bytes)

	// Recovery yields the header records, then every entry after 12 (and
	// possibly some at or below it from the first kept segment).
	_, got, _ := reopen(t, w, opts)
	require.GreaterOrEqual(t, len(got), 2)
	assert.Equal(t, hardState, got[0].Type)
	assert.Equal(t, "term 1", string(got[0].Data))
	ents := onlyType(got, entryType)
	require.NotEmpty(t, ents)
	assert.LessOrEqual(t, ents[0].Index, uint64(13))
	assert.Equal(t, uint64(31), ents[len(ents)-1].Index)
	for i := 1; i < len(ents); i++ {
		assert.Equal(t, ents[i-1].Index+1, ents[i].Index)
	}
	snaps := onlyType(got, snapMark)
	require.NotEmpty(t, snaps)
	requireSameRecords(t, []Record{snap}, snaps[len(snaps)-1:])
}

func TestCompactNeverDeletesCurrentSegment(t *testing.T) {
	dir := t.TempDir()
	opts := headerOpts(60)
	w, _, _ := openRead(t, dir, opts)
	require.NoError(t, w.Save(Record{Type: hardState, Data: []byte("hs")}))
	for i := uint64(1); i <= 10; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	names := segmentFiles(t, dir)
	require.Greater(t, len(names), 2)
	last := names[len(names)-1:]
	lastRecs, _ := decodeFile(t, filepath.Join(dir, last[0]))
	require.NoError(t, w.Compact(^uint64(0)))
	assert.Equal(t, last, segmentFiles(t, dir))

	// Appends continue, and the hard state survives in the head.
	require.NoError(t, w.Save(entry(11)))
	_, got, _ := reopen(t, w, opts)
	requireSameRecords(t, append(onlyType(lastRecs, entryType), entry(11)), onlyType(got, entryType))
	assert.Equal(t, Record{Type: hardState, Data: []byte("hs")}, got[0])
}

func TestCompactDeletesOnlyAPrefix(t *testing.T) {
	// Raft may overwrite entries: a later segment can hold lower indexes
	// than an earlier one. Deleting that later segment alone would bring the
	// overwritten entries back, so compaction stops at the first segment it
	// must keep.
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 1, NoSync: true})
	for _, i := range []uint64{1, 2, 9, 3, 4} {
		require.NoError(t, w.Save(entry(i)))
	}
	before := segmentFiles(t, dir)
	require.Len(t, before, 5, "one record per segment")

	require.NoError(t, w.Compact(4))
	assert.Equal(t, before[2:], segmentFiles(t, dir))
	_, got, _ := reopen(t, w, Options{SegmentBytes: 1, NoSync: true})
	requireSameRecords(t, []Record{entry(9), entry(3), entry(4)}, got)
}

func TestCompactWithNothingEligible(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 1, NoSync: true})
	for i := uint64(5); i <= 8; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	before := segmentFiles(t, dir)
	require.NoError(t, w.Compact(4))
	assert.Equal(t, before, segmentFiles(t, dir))
}
