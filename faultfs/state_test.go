package faultfs

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The trash is not part of the mount: not listed, not reachable, not
// creatable.
func TestTrashIsHidden(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "x"})
	require.NoError(t, os.Remove(tf.m("a")))
	_, err := os.Stat(tf.backing + "/" + TrashName)
	require.NoError(t, err, "the backing store has the trash")
	names, err := os.ReadDir(tf.mnt)
	require.NoError(t, err)
	assert.Empty(t, names)
	_, err = os.Stat(tf.m(TrashName))
	assert.True(t, os.IsNotExist(err), "%v", err)
	assert.Error(t, os.Mkdir(tf.m(TrashName), 0o755))
}

// A WAL's way of writing (records appended into a preallocated, fsynced
// segment, each followed by fdatasync) keeps no undo state past each
// fdatasync, and only the overwritten bytes before it.
func TestUndoStateStaysSmall(t *testing.T) {
	tf := mountTest(t, nil)
	f, err := os.OpenFile(tf.m("segment"), os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f.Close()
	const size = 8 << 20
	require.NoError(t, unix.Fallocate(int(f.Fd()), 0, 0, size))
	require.NoError(t, f.Sync())
	tf.syncDir(t, "")
	record := bytes.Repeat([]byte{'r'}, 4096)
	for i := range 16 {
		_, err := f.WriteAt(record, int64(i*len(record)))
		require.NoError(t, err)
		require.Equal(t, Status{PendingFiles: 1, UndoBytes: 4096}, tf.Status(), "record %d before its fdatasync", i)
		require.NoError(t, unix.Fdatasync(int(f.Fd())))
		require.Equal(t, Status{}, tf.Status(), "record %d after its fdatasync", i)
	}
	_, err = f.WriteAt([]byte("lost"), 16*4096)
	require.NoError(t, err)
	tf.powerLoss(t)
	b, err := os.ReadFile(tf.backing + "/segment")
	require.NoError(t, err)
	assert.Len(t, b, size)
	assert.Equal(t, bytes.Repeat(record, 16), b[:16*4096])
	assert.Equal(t, make([]byte, 4), b[16*4096:16*4096+4], "the unsynced record is zeros again")
}

// A WAL's records written into its preallocated, fsynced segment save the
// zeros they overwrite without reading them; the file's state (and its
// descriptor) is kept from one fdatasync to the next write, and goes when
// the handle is released.
func TestPreallocatedSpaceIsSavedUnread(t *testing.T) {
	tf := mountTest(t, nil)
	f, err := os.OpenFile(tf.m("segment"), os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f.Close()
	head := []byte("header")
	_, err = f.WriteAt(head, 0)
	require.NoError(t, err)
	require.NoError(t, unix.Fallocate(int(f.Fd()), 0, 0, 1<<20))
	require.NoError(t, unix.Fdatasync(int(f.Fd())))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(tf.backing, "segment"), &st))
	state := func() *fileState {
		tf.mu.Lock()
		defer tf.mu.Unlock()
		return tf.files[st.Ino]
	}
	synced := state()
	require.NotNil(t, synced, "the state stays after the fdatasync")
	require.False(t, synced.pending)

	for i := range 3 {
		off := int64(len(head) + 100*i)
		_, err = f.WriteAt(bytes.Repeat([]byte{'r'}, 100), off)
		require.NoError(t, err)
		tf.mu.Lock()
		require.Same(t, synced, tf.files[st.Ino], "record %d: the state is reused", i)
		require.Equal(t, extents{{off: off, n: 100}}, synced.undo, "record %d: zeros saved unread", i)
		tf.mu.Unlock()
		require.NoError(t, unix.Fdatasync(int(f.Fd())))
	}
	require.NoError(t, f.Close())
	require.Eventually(t, func() bool { return state() == nil }, 5*time.Second, time.Millisecond, "the release drops the state")
}

// A hard link's second name is a name like any other; both names reach
// the same tracked data.
func TestHardLinkNameIsDurableAtDirectoryFsync(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "data"})
	require.NoError(t, os.Link(tf.m("a"), tf.m("b")))
	tf.write(t, "b", os.O_WRONLY|os.O_APPEND, "+more", "")
	tf.powerLoss(t)
	assert.Equal(t, "data", tf.content(t, "a"))
	assert.Equal(t, "<absent>", tf.content(t, "b"))
}

// The status counts what is pending, and a power loss reports what it
// dropped.
func TestStatusCountsWhatIsPending(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "0123456789"})
	tf.write(t, "a", os.O_WRONLY, "abc", "")
	tf.write(t, "new", os.O_CREATE|os.O_WRONLY, "xyz", "")
	want := Status{PendingFiles: 2, UndoBytes: 3, UndoMemoryBytes: 3, PendingNames: 1}
	assert.Equal(t, want, tf.Status())
	dropped, err := tf.PowerLoss()
	require.NoError(t, err)
	assert.Equal(t, want, dropped)
	assert.Equal(t, Status{}, tf.Status())
}

// A power loss drops what the kernel cached of the mount (attributes,
// pages), so that even a descriptor opened before it sees the durable
// state (only for this test: programs must be dead at a power loss).
func TestPowerLossDropsTheKernelsCaches(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "durable"})
	f, err := os.OpenFile(tf.m("a"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte("DURABLE, not"), 0)
	require.NoError(t, err)
	buf := make([]byte, 64)
	n, err := f.ReadAt(buf, 0)
	require.Equal(t, "DURABLE, not", string(buf[:n]), "%v", err)
	fi, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(12), fi.Size())
	tf.powerLoss(t)
	fi, err = f.Stat()
	require.NoError(t, err)
	assert.Equal(t, int64(7), fi.Size(), "the cached size is dropped")
	n, _ = f.ReadAt(buf, 0)
	assert.Equal(t, "durable", string(buf[:n]), "the cached pages are dropped")
}
