package faultfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// undoTracker is a Tracker (no mount) of a fresh backing store holding
// the file "f" with content, with the bound on undo memory limit.
func undoTracker(t *testing.T, content []byte, limit int64) (tr *Tracker, path string, ino uint64) {
	t.Helper()
	root := t.TempDir()
	path = filepath.Join(root, "f")
	require.NoError(t, os.WriteFile(path, content, 0o644))
	tr, err := NewTracker(root, time.Now, Options{UndoMemory: limit})
	require.NoError(t, err)
	b, err := bindingAt(path)
	require.NoError(t, err)
	return tr, path, b.ino
}

// randomBytes is n bytes of seeded noise (no runs of zeros to speak of).
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + r.IntN(255))
	}
	return b
}

// checkUndoCounts fails the test unless the Tracker's counts of undo
// bytes in memory and spilled are the sums over its files' runs, and
// those in memory are within the bound.
func checkUndoCounts(t *testing.T, tr *Tracker) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var inMemory, spilled int64
	for _, st := range tr.files {
		_, m, s := st.undo.bytes()
		inMemory, spilled = inMemory+m, spilled+s
	}
	assert.Equal(t, inMemory, tr.undo.mem, "bytes in memory")
	assert.Equal(t, spilled, tr.undo.spilled, "bytes spilled")
	assert.LessOrEqual(t, tr.undo.mem, tr.undo.limit, "bytes in memory are within the bound")
}

// Overwrites and a truncation of a file much larger than the bound keep
// no more than the bound in memory, the rest spilled, and a power loss
// still gives back the exact durable content. (Before the bound, a
// truncate -s 0 of a 256 MiB file read all 256 MiB into memory.)
func TestUndoMemoryIsBounded(t *testing.T) {
	const size, limit = 4 << 20, 64 << 10
	durable := randomBytes(1, size)
	tr, path, ino := undoTracker(t, durable, limit)
	open := func() (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }
	write := func(off int64, n int) {
		t.Helper()
		c := change{a: off, b: off + int64(n)}
		require.Zero(t, tr.dataChange(ino, open, c, func() syscall.Errno {
			f, err := open()
			require.NoError(t, err)
			defer f.Close()
			_, err = f.WriteAt(bytes.Repeat([]byte{'w'}, n), off)
			return errnoOf(err)
		}))
		checkUndoCounts(t, tr)
	}
	write(0, 16<<10)        // in memory
	write(100<<10, 100<<10) // past the bound: spilled
	write(16<<10, 8<<10)    // in memory, joining the first run
	st := tr.Status()
	assert.Equal(t, Status{PendingFiles: 1, UndoBytes: 124 << 10, UndoMemoryBytes: 24 << 10, UndoSpilledBytes: 100 << 10}, st)

	require.Zero(t, tr.dataChange(ino, open, change{a: 0, b: -1, cut: true}, func() syscall.Errno {
		return errnoOf(os.Truncate(path, 0))
	}))
	checkUndoCounts(t, tr)
	st = tr.Status()
	assert.Equal(t, int64(size), st.UndoBytes, "every durable byte is saved")
	assert.Equal(t, int64(24<<10), st.UndoMemoryBytes, "no more in memory than before the truncation")
	assert.Equal(t, int64(size-24<<10), st.UndoSpilledBytes)
	trash, err := os.ReadDir(tr.names.trash)
	require.NoError(t, err)
	assert.Empty(t, trash, "spill files are unlinked")

	dropped, err := tr.PowerLoss()
	require.NoError(t, err)
	assert.Equal(t, st, dropped)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(durable, b), "the power loss gives back the durable content")
	assert.Equal(t, Status{}, tr.Status(), "nothing held after the power loss")
	checkUndoCounts(t, tr)
}

// An fsync drops the saved bytes, spilled ones too, and the memory they
// held is free for the next change.
func TestSyncFreesUndoMemory(t *testing.T) {
	tr, path, ino := undoTracker(t, randomBytes(2, 256<<10), 64<<10)
	open := func() (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }
	truncate := func() syscall.Errno { return errnoOf(os.Truncate(path, 0)) }
	require.Zero(t, tr.dataChange(ino, open, change{a: 0, b: -1, cut: true}, truncate))
	assert.Equal(t, int64(256<<10), tr.Status().UndoSpilledBytes)
	require.Zero(t, tr.fileSynced(ino, func() error { return nil }))
	assert.Equal(t, Status{}, tr.Status())
	checkUndoCounts(t, tr)
}

// A change whose old bytes can be neither kept in memory nor spilled is
// refused (EIO here: the spill file cannot be made; ENOSPC when the
// backing store is full), changes nothing, and the status counts it.
func TestUnspillableChangeIsRefused(t *testing.T) {
	durable := randomBytes(3, 128<<10)
	tr, path, ino := undoTracker(t, durable, 64<<10)
	require.NoError(t, os.RemoveAll(tr.names.trash)) // where spill files are made
	open := func() (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }
	ran := false
	errno := tr.dataChange(ino, open, change{a: 0, b: -1, cut: true}, func() syscall.Errno {
		ran = true
		return errnoOf(os.Truncate(path, 0))
	})
	assert.Equal(t, syscall.EIO, errno)
	assert.False(t, ran, "the truncation was not done")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(durable, b))
	assert.Equal(t, Status{PendingFiles: 1, UndoRefused: 1}, tr.Status())
	checkUndoCounts(t, tr)
}

func TestNewTrackerRefusesANegativeBound(t *testing.T) {
	_, err := NewTracker(t.TempDir(), time.Now, Options{UndoMemory: -1})
	assert.EqualError(t, err, "undo memory bound -1 is negative")
}

// Spilled runs join only runs that follow them in the spill file too.
func TestExtentsJoinSpilledRunsInOrder(t *testing.T) {
	var es extents
	es.add(extent{off: 0, n: 10, spilled: true, at: 0})
	es.add(extent{off: 10, n: 5, spilled: true, at: 10})
	es.add(extent{off: 20, n: 5, spilled: true, at: 15})
	es.add(extent{off: 15, n: 5, spilled: true, at: 40})
	es.add(run(25, "ab"))
	assert.Equal(t, extents{{off: 0, n: 15, spilled: true}, {off: 15, n: 5, spilled: true, at: 40},
		{off: 20, n: 5, spilled: true, at: 15}, run(25, "ab")}, es)
	all, inMemory, spilled := es.bytes()
	assert.Equal(t, [3]int64{27, 2, 25}, [3]int64{all, inMemory, spilled})
}

// Through the mount: a truncate -s 0, then an O_TRUNC open, of a file far
// larger than the bound keep at most the bound in memory, and a power
// loss gives the file back whole.
func TestTruncatingALargeFileSpills(t *testing.T) {
	const size, limit = 2 << 20, 64 << 10
	durable := randomBytes(4, size)
	tf := mountTestOpts(t, map[string]string{"f": string(durable), "g": string(durable)}, Options{UndoMemory: limit})
	require.NoError(t, os.Truncate(tf.m("f"), 0))
	tf.write(t, "g", os.O_WRONLY|os.O_TRUNC, "new", "")
	st := tf.Status()
	assert.Equal(t, Status{PendingFiles: 2, UndoBytes: 2 * size, UndoSpilledBytes: 2 * size}, st)
	checkUndoCounts(t, tf.Tracker)
	tf.powerLoss(t)
	for _, name := range []string{"f", "g"} {
		require.True(t, tf.content(t, name) == string(durable), "%s comes back whole", name)
	}
	assert.Equal(t, Status{}, tf.Status())
}
