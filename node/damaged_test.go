package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/node/eventlog"
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
	for off := 0; off < len(data); {
		offsets = append(offsets, off)
		length := int(data[off]) | int(data[off+1])<<8 | int(data[off+2])<<16 | int(data[off+3])<<24
		off += 17 + length
	}
	return dir, segs[0], offsets
}

// damagedNode starts a node of three on dir with bugs.
func damagedNode(t *testing.T, dir string, bugs ...string) (*Server, error) {
	t.Helper()
	s, err := New(Config{Name: "n1", DataDir: dir, ClientAddr: "127.0.0.1:0", PeerAddr: "127.0.0.1:0",
		Peers:             map[string]string{"n1": "127.0.0.1:1", "n2": "127.0.0.1:2", "n3": "127.0.0.1:3"},
		HeartbeatInterval: 10 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		RequestTimeout: time.Second, Seed: 1, Bugs: bugs})
	if err == nil {
		t.Cleanup(func() { s.closeResources() })
	}
	return s, err
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

func TestNodeTruncatesATornTailAndStarts(t *testing.T) {
	dir, seg, offsets := dataDirWithEntries(t, 5)
	require.NoError(t, os.Truncate(seg, int64(offsets[len(offsets)-1]+10))) // entry 5 half written

	s, err := damagedNode(t, dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), s.rn.Status().LastIndex)
	evs := readEvents(t, s, dir)
	require.Equal(t, eventlog.KindStart, evs[0].Event)
	assert.Equal(t, "n2", evs[0].For, "the start event carries the vote recovered")
	assert.Equal(t, uint64(1), evs[0].Term)
	assert.Equal(t, uint64(4), evs[0].Index, "and the last index recovered")
	assert.Positive(t, evs[0].Truncated, "and the bytes of torn tail cut off")
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
