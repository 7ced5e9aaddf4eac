package corrupt

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dataDir makes a data directory like chaos-node's: two WAL segments
// (the newer preallocated: data, then a zero tail), two snapshots, a
// LOCK file with nothing in it, and the fault file system's trash.
func dataDir(t *testing.T) string {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(rel string, data []byte, mtime time.Time) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
		require.NoError(t, os.Chtimes(p, mtime, mtime))
	}
	write("wal/0000000000000001-0000000000000001.wal", bytes.Repeat([]byte{0xaa}, 4096), old)
	write("wal/0000000000000002-0000000000000080.wal", append(bytes.Repeat([]byte{0x55}, 1000), make([]byte, 200_000)...), old.Add(time.Minute))
	write("wal/LOCK", nil, old)
	write("snap/0000000000000001-0000000000000010.snap", bytes.Repeat([]byte{1}, 300), old)
	write("snap/0000000000000002-0000000000000070.snap", bytes.Repeat([]byte{2}, 500), old.Add(time.Second))
	write(".faultfs-trash/1", bytes.Repeat([]byte{9}, 100), old.Add(time.Hour))
	return dir
}

// diff returns the offsets where a and b differ, over the longer.
func diff(a, b []byte) []int {
	var out []int
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			out = append(out, i)
		}
	}
	return out
}

// A flip on the WAL changes one bit of the newest segment, within its
// data and not in its preallocated zero tail; nothing else changes.
func TestFlipNewestWAL(t *testing.T) {
	dir := dataDir(t)
	seg := filepath.Join(dir, "wal/0000000000000002-0000000000000080.wal")
	before, err := os.ReadFile(seg)
	require.NoError(t, err)
	res, err := Apply(Request{Dir: dir, Target: TargetWAL, How: HowFlip, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, "wal/0000000000000002-0000000000000080.wal", res.File)
	assert.Equal(t, TargetWAL, res.Target)
	assert.Empty(t, res.Wanted)
	assert.Equal(t, int64(201_000), res.Size)
	assert.Equal(t, int64(1000), res.DataEnd)
	after, err := os.ReadFile(seg)
	require.NoError(t, err)
	require.Equal(t, []int{int(res.Offset)}, diff(before, after))
	assert.Less(t, res.Offset, int64(1000))
	assert.Equal(t, byte(1)<<res.Bit, before[res.Offset]^after[res.Offset])
}

// Zero overwrites at most MaxZero bytes of the newest snapshot's data.
// Damage to a WAL segment lands among its newest records: within the last
// RecentBytes of its data, whatever the seed and the way.
func TestWALDamageLandsInTheNewestRecords(t *testing.T) {
	for seed := range uint64(20) {
		for _, how := range Hows() {
			dir := t.TempDir()
			seg := filepath.Join(dir, "wal", "0000000000000001-0000000000000000.wal")
			require.NoError(t, os.MkdirAll(filepath.Dir(seg), 0o755))
			const data = 4 * RecentBytes
			require.NoError(t, os.WriteFile(seg, append(bytes.Repeat([]byte{0x55}, data), make([]byte, 4096)...), 0o644))
			res, err := Apply(Request{Dir: dir, Target: TargetWAL, How: how, Seed: seed})
			require.NoError(t, err)
			require.Equal(t, int64(data), res.DataEnd)
			assert.GreaterOrEqual(t, res.Offset, int64(data-RecentBytes), "seed %d, %s", seed, how)
			assert.Less(t, res.Offset, int64(data), "seed %d, %s", seed, how)
		}
	}
}

func TestZeroNewestSnapshot(t *testing.T) {
	dir := dataDir(t)
	snap := filepath.Join(dir, "snap/0000000000000002-0000000000000070.snap")
	res, err := Apply(Request{Dir: dir, Target: TargetSnapshot, How: HowZero, Seed: 3})
	require.NoError(t, err)
	assert.Equal(t, "snap/0000000000000002-0000000000000070.snap", res.File)
	after, err := os.ReadFile(snap)
	require.NoError(t, err)
	require.Len(t, after, 500)
	for i, b := range after {
		zeroed := int64(i) >= res.Offset && int64(i) < res.Offset+res.Length
		assert.Equal(t, zeroed, b == 0, "byte %d", i)
	}
	assert.LessOrEqual(t, res.Length, int64(MaxZero))
	assert.Positive(t, res.Length)
}

// Truncate cuts a file below the end of its data.
func TestTruncate(t *testing.T) {
	dir := dataDir(t)
	res, err := Apply(Request{Dir: dir, Target: TargetWAL, How: HowTruncate, Seed: 5})
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join(dir, res.File))
	require.NoError(t, err)
	assert.Equal(t, res.Offset, st.Size())
	assert.Less(t, res.Offset, res.DataEnd)
	assert.Equal(t, res.Size-res.Offset, res.Length)
}

// A random file is never the trash's nor an empty one, and the same seed
// damages the same bytes.
func TestRandomIsSeeded(t *testing.T) {
	seen := map[string]bool{}
	for seed := range uint64(40) {
		a, b := dataDir(t), dataDir(t)
		ra, err := Apply(Request{Dir: a, Target: TargetRandom, How: HowFlip, Seed: seed})
		require.NoError(t, err)
		rb, err := Apply(Request{Dir: b, Target: TargetRandom, How: HowFlip, Seed: seed})
		require.NoError(t, err)
		assert.Equal(t, ra, rb, "seed %d", seed)
		assert.NotContains(t, ra.File, ".faultfs")
		assert.NotEqual(t, "wal/LOCK", ra.File)
		seen[ra.File] = true
	}
	assert.Len(t, seen, 4, "every file with data is chosen by some seed")
}

// With no file of the kind asked for holding data, a random file is
// damaged, and the result says what was wanted; with no file holding data
// at all, Apply fails.
func TestFallbackAndNothingToDamage(t *testing.T) {
	dir := dataDir(t)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "snap")))
	res, err := Apply(Request{Dir: dir, Target: TargetSnapshot, How: HowFlip, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, TargetRandom, res.Target)
	assert.Equal(t, TargetSnapshot, res.Wanted)

	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "zeros"), make([]byte, 100), 0o644))
	_, err = Apply(Request{Dir: empty, Target: TargetWAL, How: HowFlip})
	assert.EqualError(t, err, empty+": no file holds data")
}

func TestValidate(t *testing.T) {
	assert.EqualError(t, Request{Target: TargetWAL, How: HowFlip}.Validate(), "no data directory")
	assert.EqualError(t, Request{Dir: "d", Target: "log", How: HowFlip}.Validate(), `target "log": want wal, snapshot, random`)
	assert.EqualError(t, Request{Dir: "d", Target: TargetWAL, How: "shred"}.Validate(), `how "shred": want flip, zero, truncate`)
	_, err := Apply(Request{Dir: "d", Target: TargetWAL, How: "shred"})
	assert.Error(t, err)
}

func TestKindOf(t *testing.T) {
	for rel, want := range map[string]string{
		"wal/0000000000000001-0000000000000001.wal":        TargetWAL,
		"member/wal/0000000000000000-0000000000000000.wal": TargetWAL,
		"member/wal/0.tmp": TargetWAL,
		"snap/0000000000000001-0000000000000010.snap": TargetSnapshot,
		"member/snap/db": TargetSnapshot,
		"join.json":      "",
	} {
		assert.Equal(t, want, kindOf(rel), rel)
	}
}
