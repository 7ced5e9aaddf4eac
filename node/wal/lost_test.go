package wal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncedFive saves entries 1 to 5, each fsynced, and returns an image of
// the directory as the disk holds it when the process dies then (the
// segment preallocated, not trimmed), and the segment's path in it.
func syncedFive(t *testing.T) (dir, seg string) {
	t.Helper()
	w, _, _ := openRead(t, t.TempDir(), Options{SegmentBytes: 1 << 20})
	for i := uint64(1); i <= 5; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	dir = copyDir(t, w.dir)
	return dir, filepath.Join(dir, segmentFiles(t, dir)[0])
}

// damage applies f to the open segment file at path.
func damage(t *testing.T, path string, f func(*os.File) error) {
	t.Helper()
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f(file))
	require.NoError(t, file.Close())
}

// Records a Save made durable and then lost leave no torn tail when the
// damage ends exactly at a record boundary: only the sync block tells.
// The loss is reported, recorded in LOST until CaughtUp, and survives
// restarts in between.
func TestLossAtARecordBoundaryIsReportedUntilCaughtUp(t *testing.T) {
	for name, cut := range map[string]func(f *os.File, at int64) error{
		"truncated": func(f *os.File, at int64) error { return f.Truncate(at) },
		"zeroed": func(f *os.File, at int64) error {
			_, err := f.WriteAt(make([]byte, recordBytes(entries(4, 5))), at)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, seg := syncedFive(t)
			at := SyncBlockBytes + recordBytes(entries(1, 3))
			damage(t, seg, func(f *os.File) error { return cut(f, at) })

			w, got, info := openRead(t, dir, Options{SegmentBytes: 1 << 20})
			requireSameRecords(t, entries(1, 3), got)
			assert.Zero(t, info.TruncatedBytes, "nothing looks torn")
			assert.True(t, info.Lost)
			assert.Contains(t, info.LostReason, "were fsynced")
			assert.FileExists(t, filepath.Join(dir, lostFile))

			require.NoError(t, w.Save(entry(4)))
			w, _, info = reopen(t, w, Options{SegmentBytes: 1 << 20})
			assert.True(t, info.Lost, "a restart before the catch-up keeps the loss")
			require.NoError(t, w.CaughtUp())
			assert.NoFileExists(t, filepath.Join(dir, lostFile))
			_, got, info = reopen(t, w, Options{SegmentBytes: 1 << 20})
			requireSameRecords(t, entries(1, 4), got)
			assert.False(t, info.Lost)
		})
	}
}

// A torn write past what was fsynced is what a crash leaves: truncated,
// and no loss.
func TestTornTailPastTheSyncedEndIsNoLoss(t *testing.T) {
	dir, seg := syncedFive(t)
	end := SyncBlockBytes + recordBytes(entries(1, 5))
	damage(t, seg, func(f *os.File) error {
		_, err := f.WriteAt(encodeRecord(nil, entry(6))[:12], end)
		return err
	})
	_, got, info := openRead(t, dir, Options{SegmentBytes: 1 << 20})
	requireSameRecords(t, entries(1, 5), got)
	assert.Positive(t, info.TruncatedBytes)
	assert.False(t, info.Lost)
	assert.NoFileExists(t, filepath.Join(dir, lostFile))
}

// A torn record inside what was fsynced is damage, not a crash: a loss.
func TestTornTailBeforeTheSyncedEndIsALoss(t *testing.T) {
	dir, seg := syncedFive(t)
	damage(t, seg, func(f *os.File) error {
		return f.Truncate(SyncBlockBytes + recordBytes(entries(1, 4)) + 5)
	})
	_, got, info := openRead(t, dir, Options{SegmentBytes: 1 << 20})
	requireSameRecords(t, entries(1, 4), got)
	assert.Positive(t, info.TruncatedBytes)
	assert.True(t, info.Lost)
}

// A damaged sync block leaves what was fsynced unknown: a loss, though
// every record is there.
func TestDamagedSyncBlockIsALoss(t *testing.T) {
	dir, seg := syncedFive(t)
	damage(t, seg, func(f *os.File) error {
		_, err := f.WriteAt([]byte{0xff}, 9)
		return err
	})
	_, got, info := openRead(t, dir, Options{SegmentBytes: 1 << 20})
	requireSameRecords(t, entries(1, 5), got)
	assert.True(t, info.Lost)
	assert.Contains(t, info.LostReason, "sync block damaged")
}

// A segment that is not the last cannot lose its end without a hole in
// the log: ErrCorrupt.
func TestLossInASegmentThatIsNotTheLastIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{SegmentBytes: 256})
	for i := uint64(1); i <= 20; i++ {
		require.NoError(t, w.Save(entry(i)))
	}
	require.NoError(t, w.Close())
	first := filepath.Join(dir, segmentFiles(t, dir)[0])
	damage(t, first, func(f *os.File) error { return f.Truncate(SyncBlockBytes + recordBytes(entries(1, 1))) })
	w, err := Open(dir, Options{SegmentBytes: 256})
	require.NoError(t, err)
	defer w.Close()
	_, _, err = w.ReadAll()
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "not the last")
}
