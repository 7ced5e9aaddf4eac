package wal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingSyncer counts fsyncs and performs them.
type countingSyncer struct{ files, dirs int }

func (c *countingSyncer) SyncFile(f *os.File) error { c.files++; return datasync(f) }
func (c *countingSyncer) SyncDir(dir string) error {
	c.dirs++
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func TestSaveFsyncsBeforeReturningAndLazySyncDoesNot(t *testing.T) {
	for name, bugs := range map[string]Bugs{"correct": {}, "lazy-fsync": {LazySync: true}} {
		t.Run(name, func(t *testing.T) {
			s := &countingSyncer{}
			w, _, _ := openRead(t, t.TempDir(), Options{Syncer: s, Bugs: bugs})
			before := s.files
			require.NoError(t, w.Save(entry(1)))
			if bugs.LazySync {
				assert.Equal(t, before, s.files, "lazy-fsync: Save returned without an fsync")
				require.NoError(t, w.Sync())
				assert.Equal(t, before+1, s.files, "Sync fsyncs what Save wrote")
				require.NoError(t, w.Sync())
				assert.Equal(t, before+1, s.files, "nothing unsynced: no fsync")
				return
			}
			assert.Equal(t, before+1, s.files, "Save fsyncs before it returns")
		})
	}
}

func TestCutAndCompactFsyncTheDirectoryUnlessNoDirSync(t *testing.T) {
	for name, bugs := range map[string]Bugs{"correct": {}, "no-dir-fsync": {NoDirSync: true}} {
		t.Run(name, func(t *testing.T) {
			s := &countingSyncer{}
			opts := Options{Syncer: s, Bugs: bugs, SegmentBytes: 16}
			w, _, _ := openRead(t, t.TempDir(), opts) // creates the first segment
			require.NoError(t, w.Save(entry(1)))
			require.NoError(t, w.Save(entry(2))) // past 16 bytes: a cut
			require.NoError(t, w.Compact(1))     // deletes the first segment
			require.Equal(t, 1, w.Stats().Segments, "the first segment was cut and compacted away")
			if bugs.NoDirSync {
				assert.Zero(t, s.dirs, "no-dir-fsync: creates, renames and removes without a directory fsync")
				return
			}
			assert.Equal(t, 3, s.dirs, "one directory fsync per segment created and per segment removed")
		})
	}
}

func TestTrustCorruptReplaysARecordWhoseChecksumFails(t *testing.T) {
	for name, bugs := range map[string]Bugs{"correct": {}, "trust-corrupt": {TrustCorrupt: true}} {
		t.Run(name, func(t *testing.T) {
			dir, seg := fiveEntries(t)
			_, offsets := decodeFile(t, seg)
			data, err := os.ReadFile(seg)
			require.NoError(t, err)
			data[offsets[3]-1] ^= 0x01 // the last data byte of the third record
			require.NoError(t, os.WriteFile(seg, data, 0o644))

			w, err := Open(dir, Options{NoSync: true, Bugs: bugs})
			require.NoError(t, err)
			defer w.Close()
			got, _, err := w.ReadAll()
			if !bugs.TrustCorrupt {
				require.ErrorIs(t, err, ErrCorrupt)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, 5)
			assert.Equal(t, "entry-2", string(got[2].Data[:7]))
			assert.NotEqual(t, entry(3).Data, got[2].Data, "the damaged record is returned as it is on disk")
			requireSameRecords(t, entries(4, 5), got[3:])
		})
	}
}

func TestTrustCorruptStillStopsAtZeros(t *testing.T) {
	dir, _ := fiveEntries(t)
	_, got, info := openRead(t, dir, Options{Bugs: Bugs{TrustCorrupt: true}})
	requireSameRecords(t, entries(1, 5), got)
	assert.Zero(t, info.TruncatedBytes)
	names, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	require.NoError(t, err)
	assert.Len(t, names, 1)
}

func TestReadAllMakesWhatItReturnsDurable(t *testing.T) {
	dir, _ := fiveEntries(t) // written with NoSync: as a killed process leaves them
	s := &countingSyncer{}
	_, got, _ := openRead(t, dir, Options{Syncer: s})
	requireSameRecords(t, entries(1, 5), got)
	assert.Equal(t, 1, s.files, "the last segment is fsynced before ReadAll returns")
	assert.Equal(t, 1, s.dirs, "and the directory")
}
