package faultfs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// NamesOrdered: an fsync of a file makes every name change made before it
// durable, in any directory (a journal commit), as an fsync of a
// directory does; data stays durable at its own file's fsync only.
func TestOrderedNamesAreDurableAtAnyFsync(t *testing.T) {
	tf := mountTestModel(t, map[string]string{"old": "old data"}, NamesOrdered)
	require.NoError(t, os.MkdirAll(tf.m("member/wal"), 0o755))
	tf.write(t, "member/wal/0.wal", os.O_CREATE|os.O_WRONLY, "record", "fsync")
	require.NoError(t, os.Rename(tf.m("old"), tf.m("renamed")))
	tf.powerLoss(t)
	assert.Equal(t, "record", tf.content(t, "member/wal/0.wal"),
		"the file's fsync made its new directories' names durable")
	assert.Equal(t, "old data", tf.content(t, "old"), "a rename after the last fsync is undone")
	assert.Equal(t, "<absent>", tf.content(t, "renamed"))

	require.NoError(t, os.Rename(tf.m("old"), tf.m("renamed")))
	tf.write(t, "other", os.O_CREATE|os.O_WRONLY, "unsynced data", "")
	tf.write(t, "member/wal/0.wal", os.O_WRONLY|os.O_APPEND, "+more", "fdatasync")
	tf.powerLoss(t)
	assert.Equal(t, "old data", tf.content(t, "renamed"), "an fdatasync of another file committed the rename")
	assert.Equal(t, "<absent>", tf.content(t, "old"))
	assert.Equal(t, "", tf.content(t, "other"), "the name is durable, its data was never synced")
	assert.Equal(t, "record+more", tf.content(t, "member/wal/0.wal"))
}

// The same steps under NamesPOSIX lose the names: only directory fsyncs
// make them durable.
func TestPOSIXNamesNeedTheirDirectorysFsync(t *testing.T) {
	tf := mountTestModel(t, nil, NamesPOSIX)
	require.NoError(t, os.MkdirAll(tf.m("member/wal"), 0o755))
	tf.write(t, "member/wal/0.wal", os.O_CREATE|os.O_WRONLY, "record", "fsync")
	tf.syncDir(t, "member")
	tf.powerLoss(t)
	assert.Equal(t, "<absent>", tf.content(t, "member/wal/0.wal"), "member itself was never made durable in the root")
}

func TestParseNames(t *testing.T) {
	for in, want := range map[string]Names{"": NamesPOSIX, "posix": NamesPOSIX, "ordered": NamesOrdered} {
		got, err := ParseNames(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ParseNames("ext4")
	assert.EqualError(t, err, `names model "ext4": want posix or ordered`)
}
