package node

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/raft"
)

// The commit index recovered is never past what the node holds: a hard
// state is written before the entries of its Ready, so a torn write can
// keep it and lose them, with or without a snapshot under them.
func TestRecoverClampsTheCommitIndex(t *testing.T) {
	for _, tc := range []struct {
		name       string
		snapshot   uint64 // 0: none
		entries    uint64 // entries 1..entries, then a hard state committing 10
		wantCommit uint64
	}{
		{"entries only", 0, 4, 4},
		{"a snapshot and no entries after it", 5, 5, 5},
		{"a snapshot and entries after it", 5, 7, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			disk, err := openStorage(dir, storageOptions{})
			require.NoError(t, err)
			_, _, err = disk.recover()
			require.NoError(t, err)
			var ents []raft.Entry
			for i := uint64(1); i <= tc.entries; i++ {
				ents = append(ents, raft.Entry{Index: i, Term: 1, Data: []byte{byte(i)}})
			}
			require.NoError(t, disk.save(raft.HardState{Term: 1, Commit: tc.entries}, ents, true))
			if tc.snapshot > 0 {
				require.NoError(t, disk.saveSnapshot(raft.Snapshot{Meta: raft.SnapshotMeta{Index: tc.snapshot, Term: 1}, Data: []byte("{}")}))
			}
			require.NoError(t, disk.save(raft.HardState{Term: 1, Commit: 10}, nil, false)) // its entries torn off
			require.NoError(t, disk.close())

			disk, err = openStorage(dir, storageOptions{})
			require.NoError(t, err)
			defer disk.close()
			st, _, err := disk.recover()
			require.NoError(t, err)
			assert.Equal(t, tc.wantCommit, st.HardState.Commit)
		})
	}
}
