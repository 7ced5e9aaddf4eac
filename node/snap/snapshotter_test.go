package snap

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newSnapshotter(t *testing.T) (*Snapshotter, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	s, err := New(dir)
	require.NoError(t, err)
	return s, dir
}

func snapFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, _, err := listFiles(dir)
	require.NoError(t, err)
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return names
}

func TestSaveLoad(t *testing.T) {
	s, dir := newSnapshotter(t)
	require.NoError(t, s.Save(3, 0x1a, []byte("kv state")))
	assert.FileExists(t, filepath.Join(dir, "0000000000000003-000000000000001a.snap"))

	term, index, data, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, uint64(3), term)
	assert.Equal(t, uint64(0x1a), index)
	assert.Equal(t, "kv state", string(data))

	// A new Snapshotter on the same directory sees it too.
	s2, err := New(dir)
	require.NoError(t, err)
	_, index, _, err = s2.Load()
	require.NoError(t, err)
	assert.Equal(t, uint64(0x1a), index)
}

func TestEmptySnapshotData(t *testing.T) {
	s, _ := newSnapshotter(t)
	require.NoError(t, s.Save(1, 1, nil))
	_, _, data, err := s.Load()
	require.NoError(t, err)
	assert.Empty(t, data)
}

func TestEmptyDirHasNoSnapshot(t *testing.T) {
	s, dir := newSnapshotter(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "unrelated.txt"), []byte("x"), 0o644))
	_, _, _, err := s.Load()
	require.ErrorIs(t, err, ErrNoSnapshot)
}

func TestNewestWins(t *testing.T) {
	s, _ := newSnapshotter(t)
	// Saved out of order: the highest index wins, then the highest term.
	require.NoError(t, s.Save(2, 20, []byte("b")))
	require.NoError(t, s.Save(5, 30, []byte("c")))
	require.NoError(t, s.Save(1, 10, []byte("a")))
	term, index, data, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, []any{uint64(5), uint64(30), "c"}, []any{term, index, string(data)})

	// Hex names sort differently from numbers past 9: 0x10 > 0x9.
	require.NoError(t, s.Save(5, 0x100, []byte("d")))
	_, index, _, err = s.Load()
	require.NoError(t, err)
	assert.Equal(t, uint64(0x100), index)
}

func TestSameIndexHigherTermWins(t *testing.T) {
	s, _ := newSnapshotter(t)
	require.NoError(t, s.Save(7, 50, []byte("new term")))
	require.NoError(t, s.Save(6, 50, []byte("old term")))
	term, _, data, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, uint64(7), term)
	assert.Equal(t, "new term", string(data))
}

func TestCorruptNewestFallsBack(t *testing.T) {
	for name, damage := range map[string]func([]byte) []byte{
		"flipped data byte": func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"flipped checksum":  func(b []byte) []byte { b[0] ^= 1; return b },
		"truncated":         func(b []byte) []byte { return b[:len(b)-2] },
		"shorter than crc":  func(b []byte) []byte { return b[:3] },
		"empty":             func(b []byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			dir := filepath.Join(t.TempDir(), "snap")
			s, err := New(dir, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			require.NoError(t, err)
			require.NoError(t, s.Save(1, 10, []byte("older")))
			require.NoError(t, s.Save(1, 20, []byte("newest")))
			newest := filepath.Join(dir, fileName(1, 20))
			contents, err := os.ReadFile(newest)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(newest, damage(contents), 0o644))

			_, index, data, err := s.Load()
			require.NoError(t, err)
			assert.Equal(t, uint64(10), index)
			assert.Equal(t, "older", string(data))
			assert.Contains(t, logs.String(), "skipping corrupt snapshot")
			assert.Contains(t, logs.String(), newest)
		})
	}
}

func TestSnapshotRenamedToAnotherIndexIsCorrupt(t *testing.T) {
	s, dir := newSnapshotter(t)
	require.NoError(t, s.Save(1, 10, []byte("at 10")))
	require.NoError(t, os.Rename(filepath.Join(dir, fileName(1, 10)), filepath.Join(dir, fileName(1, 11))))
	_, _, _, err := s.Load()
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestAllCorruptIsAnError(t *testing.T) {
	s, dir := newSnapshotter(t)
	require.NoError(t, s.Save(1, 10, []byte("a")))
	require.NoError(t, s.Save(1, 20, []byte("b")))
	for _, name := range snapFiles(t, dir) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("garbage!"), 0o644))
	}
	_, _, _, err := s.Load()
	require.ErrorIs(t, err, ErrCorrupt)
	assert.NotErrorIs(t, err, ErrNoSnapshot, "a node must not start empty when its snapshots are damaged")
	assert.Contains(t, err.Error(), dir)
}

func TestPruningKeepsNewestThree(t *testing.T) {
	s, dir := newSnapshotter(t)
	for i := uint64(1); i <= 6; i++ {
		require.NoError(t, s.Save(1, i*10, fmt.Appendf(nil, "state %d", i)))
		assert.Len(t, snapFiles(t, dir), min(int(i), Keep))
	}
	assert.Equal(t, []string{fileName(1, 60), fileName(1, 50), fileName(1, 40)}, snapFiles(t, dir))

	// An older snapshot saved late is pruned at once, the newest stay.
	require.NoError(t, s.Save(1, 5, []byte("late")))
	assert.Equal(t, []string{fileName(1, 60), fileName(1, 50), fileName(1, 40)}, snapFiles(t, dir))
}

func TestNewRemovesUnfinishedSaves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	tmp := filepath.Join(dir, fileName(1, 1)+".12345"+tempSuffix)
	require.NoError(t, os.WriteFile(tmp, []byte("half"), 0o644))
	other := filepath.Join(dir, "keep.tmp")
	require.NoError(t, os.WriteFile(other, nil, 0o644))

	s, err := New(dir)
	require.NoError(t, err)
	assert.NoFileExists(t, tmp)
	assert.FileExists(t, other)
	_, _, _, err = s.Load()
	require.ErrorIs(t, err, ErrNoSnapshot)
}

func TestSaveLeavesNoTempFiles(t *testing.T) {
	s, dir := newSnapshotter(t)
	require.NoError(t, s.Save(1, 1, []byte("x")))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, fileName(1, 1), entries[0].Name())
}

func TestNewFailsOnUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := New(file)
	require.Error(t, err)
	assert.Contains(t, err.Error(), file)
}

func TestFileNames(t *testing.T) {
	f, ok := parseFileName(fileName(0xabc, 0xdef))
	require.True(t, ok)
	assert.Equal(t, file{term: 0xabc, index: 0xdef, name: fileName(0xabc, 0xdef)}, f)
	for _, bad := range []string{
		"", "x.snap", "0000000000000001-0000000000000001.wal",
		"000000000000000g-0000000000000001.snap",
		"0000000000000001_0000000000000001.snap",
		"0000000000000001-000000000000000A.snap", // upper case is not what Save writes
	} {
		_, ok := parseFileName(bad)
		assert.False(t, ok, bad)
	}
}
