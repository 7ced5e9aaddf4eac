package faultfs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fsync(2): a write is durable once the file is fsynced, and is lost by a
// power loss before.
func TestWriteIsDurableAtFsync(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "durable content"})
	tf.write(t, "a", os.O_WRONLY, "DURABLE", "")
	require.Equal(t, "DURABLE content", tf.content(t, "a"))
	tf.powerLoss(t)
	assert.Equal(t, "durable content", tf.content(t, "a"), "an overwrite not fsynced is lost")

	tf.write(t, "a", os.O_WRONLY, "SYNCED ", "fsync")
	tf.write(t, "a", os.O_WRONLY|os.O_APPEND, " and more", "")
	tf.powerLoss(t)
	assert.Equal(t, "SYNCED  content", tf.content(t, "a"), "what fsync covered stays, what came after goes")
}

// fdatasync(2) makes a file's data and size durable as fsync does.
func TestFdatasyncMakesDataAndSizeDurable(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "short"})
	tf.write(t, "a", os.O_WRONLY|os.O_APPEND, ", then longer", "fdatasync")
	tf.powerLoss(t)
	assert.Equal(t, "short, then longer", tf.content(t, "a"))
}

// A file created since the last fsync of its directory loses its name;
// one whose name is durable but whose data was never fsynced comes back
// empty.
func TestNewFileNeedsFileAndDirectoryFsync(t *testing.T) {
	tf := mountTest(t, nil)
	tf.write(t, "synced-file", os.O_CREATE|os.O_WRONLY, "data", "fsync")
	tf.powerLoss(t)
	assert.Equal(t, "<absent>", tf.content(t, "synced-file"), "its directory was not fsynced")

	tf.write(t, "synced-dir", os.O_CREATE|os.O_WRONLY, "data", "")
	tf.syncDir(t, "")
	tf.powerLoss(t)
	assert.Equal(t, "", tf.content(t, "synced-dir"), "the name is durable, the data never was")

	tf.write(t, "both", os.O_CREATE|os.O_WRONLY, "data", "fsync")
	tf.syncDir(t, "")
	tf.powerLoss(t)
	assert.Equal(t, "data", tf.content(t, "both"))
}

// rename(2) over an existing file: until the directory is fsynced, a
// power loss brings back the file that was replaced, and the new name
// of the renamed file goes.
func TestRenameOverAnExistingFile(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "old"})
	tf.write(t, "tmp", os.O_CREATE|os.O_WRONLY, "new", "fsync")
	require.NoError(t, os.Rename(tf.m("tmp"), tf.m("a")))
	require.Equal(t, "new", tf.content(t, "a"))
	tf.powerLoss(t)
	assert.Equal(t, "old", tf.content(t, "a"))
	assert.Equal(t, "<absent>", tf.content(t, "tmp"), "tmp's name was never durable")

	tf.write(t, "tmp", os.O_CREATE|os.O_WRONLY, "new", "fsync")
	require.NoError(t, os.Rename(tf.m("tmp"), tf.m("a")))
	tf.syncDir(t, "")
	tf.powerLoss(t)
	assert.Equal(t, "new", tf.content(t, "a"))
	assert.Equal(t, "<absent>", tf.content(t, "tmp"))
}

// A durable file renamed without a directory fsync is back under its old
// name only (its content as fsynced).
func TestRenameWithoutDirectoryFsync(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "kept"})
	require.NoError(t, os.Rename(tf.m("a"), tf.m("b")))
	tf.write(t, "b", os.O_WRONLY|os.O_APPEND, " and lost", "")
	tf.powerLoss(t)
	assert.Equal(t, "kept", tf.content(t, "a"))
	assert.Equal(t, "<absent>", tf.content(t, "b"))
}

// unlink(2) is undone by a power loss until the directory is fsynced.
func TestUnlinkIsDurableAtDirectoryFsync(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "still here", "b": "gone"})
	require.NoError(t, os.Remove(tf.m("a")))
	tf.powerLoss(t)
	assert.Equal(t, "still here", tf.content(t, "a"))

	require.NoError(t, os.Remove(tf.m("b")))
	tf.syncDir(t, "")
	tf.powerLoss(t)
	assert.Equal(t, "<absent>", tf.content(t, "b"))
	assert.Equal(t, "still here", tf.content(t, "a"))
}

// A directory fsync makes durable that directory's names only: a file in
// a new subdirectory is lost with the subdirectory unless the parent is
// fsynced too.
func TestDirectoryFsyncCoversItsOwnNames(t *testing.T) {
	tf := mountTest(t, nil)
	require.NoError(t, os.Mkdir(tf.m("d"), 0o755))
	tf.write(t, "d/f", os.O_CREATE|os.O_WRONLY, "data", "fsync")
	tf.syncDir(t, "d")
	tf.powerLoss(t)
	assert.Equal(t, "<absent>", tf.content(t, "d/f"))
	_, err := os.Stat(tf.m("d"))
	assert.True(t, os.IsNotExist(err), "d's name was never durable: %v", err)

	require.NoError(t, os.Mkdir(tf.m("d"), 0o755))
	tf.write(t, "d/f", os.O_CREATE|os.O_WRONLY, "data", "fsync")
	tf.syncDir(t, "d")
	tf.syncDir(t, "")
	tf.powerLoss(t)
	assert.Equal(t, "data", tf.content(t, "d/f"))
}

// rmdir(2) of a durable directory is undone by a power loss.
func TestRmdirIsUndone(t *testing.T) {
	tf := mountTest(t, map[string]string{"d/f": "x"})
	require.NoError(t, os.Remove(tf.m("d/f")))
	require.NoError(t, os.Remove(tf.m("d")))
	tf.powerLoss(t)
	assert.Equal(t, "x", tf.content(t, "d/f"))
}

// O_APPEND writes go to the end of the file, and are data changes like
// any other: durable at fsync only.
func TestAppendIsADataChange(t *testing.T) {
	tf := mountTest(t, map[string]string{"log": "one\n"})
	tf.write(t, "log", os.O_WRONLY|os.O_APPEND, "two\n", "fsync")
	tf.write(t, "log", os.O_WRONLY|os.O_APPEND, "three\n", "")
	require.Equal(t, "one\ntwo\nthree\n", tf.content(t, "log"))
	tf.powerLoss(t)
	assert.Equal(t, "one\ntwo\n", tf.content(t, "log"))
}

// Truncation (ftruncate, truncate, O_TRUNC) is a data change: what it
// cut off comes back at a power loss, until the file is fsynced.
func TestTruncateIsADataChange(t *testing.T) {
	long := strings.Repeat("0123456789", 1000)
	tf := mountTest(t, map[string]string{"a": long, "b": long, "c": long, "d": long})
	require.NoError(t, os.Truncate(tf.m("a"), 5))
	f, err := os.OpenFile(tf.m("b"), os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(3))
	_, err = f.WriteAt([]byte("XYZ"), 5000) // a hole, then new bytes
	require.NoError(t, err)
	require.NoError(t, f.Close())
	tf.write(t, "c", os.O_WRONLY|os.O_TRUNC, "short", "")
	require.Equal(t, "short", tf.content(t, "c"))
	require.NoError(t, os.WriteFile(tf.m("d"), []byte("rewritten"), 0o644)) // O_CREAT|O_TRUNC
	tf.powerLoss(t)
	assert.Equal(t, long, tf.content(t, "a"))
	assert.Equal(t, long, tf.content(t, "b"))
	assert.Equal(t, long, tf.content(t, "c"))
	assert.Equal(t, long, tf.content(t, "d"))

	require.NoError(t, os.Truncate(tf.m("a"), 5))
	f, err = os.OpenFile(tf.m("a"), os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	tf.powerLoss(t)
	assert.Equal(t, "01234", tf.content(t, "a"))
}

// A rename across directories changes two names, each durable at its own
// directory's fsync: with only the target's fsynced, the file has both
// names after a power loss; with only the source's, neither.
func TestRenameAcrossDirectories(t *testing.T) {
	tf := mountTest(t, map[string]string{"src1/a": "data", "src2/b": "more", "dst1/.keep": "", "dst2/.keep": ""})
	require.NoError(t, os.Rename(tf.m("src1/a"), tf.m("dst1/a")))
	tf.syncDir(t, "dst1")
	require.NoError(t, os.Rename(tf.m("src2/b"), tf.m("dst2/b")))
	tf.syncDir(t, "src2")
	tf.powerLoss(t)
	assert.Equal(t, "data", tf.content(t, "src1/a"))
	assert.Equal(t, "data", tf.content(t, "dst1/a"))
	assert.Equal(t, "<absent>", tf.content(t, "src2/b"))
	assert.Equal(t, "<absent>", tf.content(t, "dst2/b"))
}

// A renamed directory is back under its old name, with what it held
// durably, until its parent is fsynced.
func TestRenamedDirectoryComesBack(t *testing.T) {
	tf := mountTest(t, map[string]string{"d/f": "data"})
	require.NoError(t, os.Rename(tf.m("d"), tf.m("e")))
	tf.write(t, "e/g", os.O_CREATE|os.O_WRONLY, "new", "fsync")
	tf.syncDir(t, "e")
	require.NoError(t, os.Remove(tf.m("e/f")))
	tf.powerLoss(t)
	assert.Equal(t, "data", tf.content(t, "d/f"), "f's removal was not durable")
	assert.Equal(t, "new", tf.content(t, "d/g"), "g's name was made durable in the directory")
	_, err := os.Stat(tf.m("e"))
	assert.True(t, os.IsNotExist(err), "%v", err)
}

// renameat2's RENAME_EXCHANGE swaps two names: undone until the directory
// is fsynced.
func TestRenameExchangeIsUndone(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "A", "b": "B"})
	require.NoError(t, unix.Renameat2(unix.AT_FDCWD, tf.m("a"), unix.AT_FDCWD, tf.m("b"), unix.RENAME_EXCHANGE))
	require.Equal(t, "B", tf.content(t, "a"))
	tf.powerLoss(t)
	assert.Equal(t, "A", tf.content(t, "a"))
	assert.Equal(t, "B", tf.content(t, "b"))
}
