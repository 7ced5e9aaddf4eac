package node

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/raft"
)

// signalSyncer reports each file fsync on a channel.
type signalSyncer struct{ files chan struct{} }

func (s signalSyncer) SyncFile(*os.File) error { s.files <- struct{}{}; return nil }
func (signalSyncer) SyncDir(string) error      { return nil }

func TestLazyFsyncSavesWithoutFsyncAndFsyncsOnItsTimer(t *testing.T) {
	ticks := make(chan time.Time)
	sy := signalSyncer{files: make(chan struct{}, 16)}
	disk, err := openStorage(t.TempDir(), storageOptions{bugs: bugSet{lazyFsync: true}, syncer: sy, lazyTicks: ticks})
	require.NoError(t, err)
	_, _, err = disk.recover()
	require.NoError(t, err)
	for len(sy.files) > 0 {
		<-sy.files // the first segment's creation
	}

	e := raft.Entry{Index: 1, Term: 1, Data: []byte("x")}
	require.NoError(t, disk.save(raft.HardState{Term: 1, Vote: 1}, []raft.Entry{e}, true))
	assert.Empty(t, sy.files, "lazy-fsync: the save returned without an fsync")

	ticks <- time.Time{}
	<-sy.files // the timer's fsync
	require.NoError(t, disk.close())
	select {
	case ticks <- time.Time{}:
		t.Fatal("the timer still runs after close")
	default: // close waited for the timer's goroutine to end
	}
}

func TestCorrectStorageFsyncsBeforeSaveReturns(t *testing.T) {
	sy := signalSyncer{files: make(chan struct{}, 16)}
	disk, err := openStorage(t.TempDir(), storageOptions{syncer: sy})
	require.NoError(t, err)
	defer disk.close()
	_, _, err = disk.recover()
	require.NoError(t, err)
	for len(sy.files) > 0 {
		<-sy.files
	}
	e := raft.Entry{Index: 1, Term: 1, Data: []byte("x")}
	require.NoError(t, disk.save(raft.HardState{Term: 1, Vote: 1}, []raft.Entry{e}, true))
	assert.Len(t, sy.files, 1, "one fsync before save returned")
}

// dirSyncs records the directories fsynced.
type dirSyncs struct{ dirs []string }

func (*dirSyncs) SyncFile(*os.File) error    { return nil }
func (d *dirSyncs) SyncDir(dir string) error { d.dirs = append(d.dirs, dir); return nil }

func TestOpenStorageFsyncsTheDataDirectoryUnlessNoDirFsync(t *testing.T) {
	for name, bugs := range map[string]bugSet{"correct": {}, "no-dir-fsync": {noDirSync: true}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sy := &dirSyncs{}
			disk, err := openStorage(dir, storageOptions{bugs: bugs, syncer: sy})
			require.NoError(t, err)
			defer disk.close()
			if bugs.noDirSync {
				assert.Empty(t, sy.dirs)
				return
			}
			assert.Equal(t, []string{dir}, sy.dirs, "wal/ and snap/ made durable in the data directory")
		})
	}
}
