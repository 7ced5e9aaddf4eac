package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/eventlog"
	"chaos/node/wal"
	"chaos/raft"
)

// dataDirWithEntries makes a data directory whose WAL holds entries 1..n
// of term 1 (with a vote for n2 in term 1) in one segment, and returns it
// with the segment's path and the offsets at which its records begin.
func dataDirWithEntries(t *testing.T, n uint64) (dir, seg string, offsets []int) {
	t.Helper()
	dir = t.TempDir()
	disk, err := openStorage(dir, storageOptions{})
	require.NoError(t, err)
	_, _, err = disk.recover()
	require.NoError(t, err)
	require.NoError(t, disk.save(raft.HardState{Term: 1, Vote: 2}, nil, true))
	for i := uint64(1); i <= n; i++ {
		e := raft.Entry{Index: i, Term: 1, Type: raft.EntryNormal, Data: []byte("some command data")}
		require.NoError(t, disk.save(raft.HardState{}, []raft.Entry{e}, true))
	}
	require.NoError(t, disk.close())
	segs, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	data, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	for off := wal.SyncBlockBytes; off < len(data); {
		offsets = append(offsets, off)
		length := int(data[off]) | int(data[off+1])<<8 | int(data[off+2])<<16 | int(data[off+3])<<24
		off += 17 + length
	}
	return dir, segs[0], offsets
}

// damagedNode starts a node of three on dir with bugs.
func damagedNode(t *testing.T, dir string, bugs ...string) (*Server, error) {
	t.Helper()
	s, err := New(damagedConfig(dir, bugs...))
	if err == nil {
		t.Cleanup(func() { s.closeResources() })
	}
	return s, err
}

// damagedConfig is the configuration damagedNode starts.
func damagedConfig(dir string, bugs ...string) Config {
	return Config{Name: "n1", DataDir: dir, ClientAddr: "127.0.0.1:0", PeerAddr: "127.0.0.1:0",
		Peers:             map[string]string{"n1": "127.0.0.1:1", "n2": "127.0.0.1:2", "n3": "127.0.0.1:3"},
		HeartbeatInterval: 10 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		RequestTimeout: time.Second, Seed: 1, Bugs: bugs}
}

// flip flips one bit of the byte at off in path.
func flip(t *testing.T, path string, off int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[off] ^= 0x04
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func TestNodeRefusesToStartOnAWALDamagedBeforeItsEnd(t *testing.T) {
	dir, seg, offsets := dataDirWithEntries(t, 5)
	flip(t, seg, offsets[3]-2) // inside the data of entry 2, entries 3..5 after it

	_, err := damagedNode(t, dir)
	require.ErrorIs(t, err, ErrDamagedStorage)
	require.ErrorIs(t, err, wal.ErrCorrupt)
	assert.Contains(t, err.Error(), seg, "the line names the file")
	assert.NotContains(t, err.Error(), "\n", "one line")
	events, err := os.ReadFile(filepath.Join(dir, eventlog.FileName))
	if err == nil {
		assert.NotContains(t, string(events), `"event":"start"`, "a node that refuses to start writes no start event")
	}
}

func TestTrustCorruptStartsOnAWALDamagedBeforeItsEnd(t *testing.T) {
	dir, seg, offsets := dataDirWithEntries(t, 5)
	flip(t, seg, offsets[3]-2)

	s, err := damagedNode(t, dir, "trust-corrupt")
	require.NoError(t, err, "trust-corrupt replays the damaged record")
	assert.Equal(t, uint64(5), s.rn.Status().LastIndex)
}

// A flip in an entry's index field leaves a gap: the correct node refuses
// to start; trust-corrupt takes the entry at its place and starts.
func TestTrustCorruptTakesADamagedIndexAtItsPlace(t *testing.T) {
	dir, seg, offsets := dataDirWithEntries(t, 5)
	flip(t, seg, offsets[3]+9) // the low byte of entry 3's index: 3 becomes 7
	dirCopy := t.TempDir()
	require.NoError(t, os.CopyFS(dirCopy, os.DirFS(dir)))

	_, err := damagedNode(t, dir)
	require.ErrorIs(t, err, ErrDamagedStorage, "a correct node refuses the checksum failure")
	s, err := damagedNode(t, dirCopy, "trust-corrupt")
	require.NoError(t, err)
	assert.Equal(t, uint64(5), s.rn.Status().LastIndex, "entries 1..5, the damaged one at 3")
}

// A torn write past what was fsynced (a record never acknowledged) is
// cut off, and the node starts and votes.
func TestNodeTruncatesATornTailAndStarts(t *testing.T) {
	dir, seg, _ := dataDirWithEntries(t, 5)
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{40, 0, 0, 0, 1, 2, 3, 4, 1, 6}) // entry 6 half written
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s, err := damagedNode(t, dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(5), s.rn.Status().LastIndex)
	assert.False(t, s.rn.Abstaining(), "nothing fsynced was lost")
	evs := readEvents(t, s, dir)
	require.Equal(t, eventlog.KindStart, evs[0].Event)
	assert.Equal(t, "n2", evs[0].For, "the start event carries the vote recovered")
	assert.Equal(t, uint64(1), evs[0].Term)
	assert.Equal(t, uint64(5), evs[0].Index, "and the last index recovered")
	assert.Positive(t, evs[0].Truncated, "and the bytes of torn tail cut off")
	assert.Empty(t, evs[0].Lost)
}

// Records that were fsynced and are gone (here cut at a record boundary,
// which leaves nothing torn) make the node start abstaining: it may have
// acknowledged them. A restart before it was caught up abstains again.
func TestNodeThatLostFsyncedRecordsStartsAbstaining(t *testing.T) {
	for name, cut := range map[string]func(seg string, offsets []int){
		"truncated at a record boundary": func(seg string, offsets []int) {
			require.NoError(t, os.Truncate(seg, int64(offsets[len(offsets)-1])))
		},
		"torn inside what was fsynced": func(seg string, offsets []int) {
			require.NoError(t, os.Truncate(seg, int64(offsets[len(offsets)-1]+10)))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, seg, offsets := dataDirWithEntries(t, 5)
			cut(seg, offsets)

			s, err := New(damagedConfig(dir))
			require.NoError(t, err)
			assert.Equal(t, uint64(4), s.rn.Status().LastIndex)
			assert.True(t, s.rn.Abstaining())
			assert.True(t, s.status.Load().Abstaining, "/status says so")
			evs := readEvents(t, s, dir)
			assert.Contains(t, evs[0].Lost, "fsynced", "the start event says why")
			require.NoError(t, s.closeResources())

			s, err = New(damagedConfig(dir))
			require.NoError(t, err)
			assert.True(t, s.rn.Abstaining(), "still abstaining after a restart")
			require.NoError(t, s.disk.caughtUp())
			require.NoError(t, s.closeResources())

			s, err = damagedNode(t, dir)
			require.NoError(t, err)
			assert.False(t, s.rn.Abstaining(), "caught up: the loss is forgotten")
		})
	}
}

func TestStartEventOfAnEmptyNodeSaysNoVote(t *testing.T) {
	dir := t.TempDir()
	s, err := damagedNode(t, dir)
	require.NoError(t, err)
	evs := readEvents(t, s, dir)
	assert.Equal(t, eventlog.NoVote, evs[0].For)
	assert.Zero(t, evs[0].Index)
	assert.True(t, eventlog.StartKnowsState(evs[0]))
}

// readEvents reads the events the node s, in dir, wrote so far.
func readEvents(t *testing.T, s *Server, dir string) []eventlog.Event {
	t.Helper()
	s.events.Flush()
	f, err := os.Open(filepath.Join(dir, eventlog.FileName))
	require.NoError(t, err)
	defer f.Close()
	evs, _, err := eventlog.ReadEvents(f)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	return evs
}

// dataDirWithSnapshots makes a data directory whose WAL, cut into small
// segments, holds entries 1..30 of term 1, with snapshots at 10 and 20
// that compacted it, and returns it with the snapshot files, oldest first.
func dataDirWithSnapshots(t *testing.T) (dir string, snaps []string) {
	t.Helper()
	dir = t.TempDir()
	disk, err := openStorage(dir, storageOptions{segmentBytes: 128})
	require.NoError(t, err)
	_, _, err = disk.recover()
	require.NoError(t, err)
	for i := uint64(1); i <= 30; i++ {
		e := raft.Entry{Index: i, Term: 1, Type: raft.EntryNormal, Data: []byte("some command data")}
		require.NoError(t, disk.save(raft.HardState{Term: 1, Vote: 1, Commit: i}, []raft.Entry{e}, true))
		if i%10 == 0 && i < 30 {
			img, err := json.Marshal(snapshotImage{Voters: []uint64{1, 2, 3}, Store: json.RawMessage(`{}`)})
			require.NoError(t, err)
			require.NoError(t, disk.saveSnapshot(raft.Snapshot{Meta: raft.SnapshotMeta{Index: i, Term: 1}, Data: img}))
		}
	}
	require.NoError(t, disk.close())
	snaps, err = filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
	require.NoError(t, err)
	require.Len(t, snaps, 2)
	return dir, snaps
}

func TestNodeRefusesToStartWhenItsSnapshotsAreCorrupt(t *testing.T) {
	for name, tc := range map[string]struct {
		damaged []int
		why     string
	}{
		"every snapshot": {[]int{0, 1}, "every snapshot is corrupt"},
		"the newest, the log compacted past the older": {[]int{1}, "the log has a gap"},
	} {
		t.Run(name, func(t *testing.T) {
			dir, snaps := dataDirWithSnapshots(t)
			for _, i := range tc.damaged {
				flip(t, snaps[i], 6)
			}
			_, err := damagedNode(t, dir)
			require.ErrorIs(t, err, ErrDamagedStorage)
			assert.Contains(t, err.Error(), tc.why)
		})
	}
}

func TestNodeStartsFromItsSnapshotAndLog(t *testing.T) {
	dir, _ := dataDirWithSnapshots(t)
	s, err := damagedNode(t, dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(30), s.rn.Status().LastIndex)
}
