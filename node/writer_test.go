package node

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/raft"
)

// openTestStorage is the storage in dir, recovered: ready to write.
func openTestStorage(t *testing.T, dir string) (*storage, raft.State) {
	t.Helper()
	disk, err := openStorage(dir)
	require.NoError(t, err)
	st, _, err := disk.recover()
	require.NoError(t, err)
	return disk, st
}

func entries(term uint64, from, to uint64) []raft.Entry {
	var out []raft.Entry
	for i := from; i <= to; i++ {
		out = append(out, raft.Entry{Index: i, Term: term, Data: []byte{byte(i)}})
	}
	return out
}

// Appends reach the disk in the order queued, and a step queued after them
// runs once they are durable: what it sees on disk includes them.
func TestDiskWriterKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	disk, _ := openTestStorage(t, dir)
	w := newDiskWriter(disk, newMetrics())
	w.append(raft.HardState{Term: 2, Commit: 1}, entries(2, 1, 3))
	w.append(raft.HardState{}, nil) // nothing to write: not queued
	w.append(raft.HardState{Term: 2, Commit: 3}, entries(2, 4, 6))
	var seen entryID
	require.NoError(t, w.do(func() error {
		seen = w.lastDurable()
		return disk.save(raft.HardState{Term: 3, Vote: 1, Commit: 5}, entries(3, 6, 7))
	}))
	assert.Equal(t, entryID{index: 6, term: 2}, seen, "the step ran after both appends were durable")
	w.close()
	require.NoError(t, disk.close())

	disk, st := openTestStorage(t, dir)
	defer disk.close()
	assert.Equal(t, raft.HardState{Term: 3, Vote: 1, Commit: 5}, st.HardState)
	require.Len(t, st.Entries, 7)
	for i, e := range st.Entries {
		want := uint64(2)
		if e.Index >= 6 {
			want = 3 // the step's entries replaced the append's 6
		}
		assert.Equal(t, uint64(i+1), e.Index)
		assert.Equal(t, want, e.Term, "entry %d", e.Index)
	}
}

// The loop hears when appends became durable, once per change at least.
func TestDiskWriterNotifies(t *testing.T) {
	disk, _ := openTestStorage(t, t.TempDir())
	defer disk.close()
	w := newDiskWriter(disk, newMetrics())
	defer w.close()
	w.append(raft.HardState{Term: 1}, entries(1, 1, 2))
	<-w.notify
	for w.lastDurable().index < 2 {
		<-w.notify
	}
	assert.Equal(t, entryID{index: 2, term: 1}, w.lastDurable())
}

// A failed write stops the writer: the loop gets the error on failed, and
// a step queued behind it fails instead of running.
func TestDiskWriterFailure(t *testing.T) {
	disk, _ := openTestStorage(t, t.TempDir())
	w := newDiskWriter(disk, newMetrics())
	require.NoError(t, disk.close()) // every write now fails
	w.append(raft.HardState{Term: 1}, entries(1, 1, 1))
	ran := false
	err := w.do(func() error { ran = true; return nil })
	assert.ErrorIs(t, err, errWriterFailed)
	assert.False(t, ran)
	assert.Error(t, <-w.failed)
	assert.Equal(t, entryID{}, w.lastDurable())
	w.close()
}
