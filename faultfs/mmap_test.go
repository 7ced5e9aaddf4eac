package faultfs

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The environment of the helper process that maps a file (see
// TestMmapHelper).
const (
	mmapPathEnv = "FAULTFS_TEST_MMAP_PATH"
	mmapDataEnv = "FAULTFS_TEST_MMAP_DATA"
	mmapSyncEnv = "FAULTFS_TEST_MMAP_SYNC"
)

// mapAndStore maps name shared and writable, stores data at its start,
// and unmaps it after msync(MS_SYNC) when sync is set. It does so in a
// process of its own: a page fault on the mount in the process that
// serves it can deadlock with Go's garbage collector (the faulting thread
// is not at a safe point while the server's goroutines wait for it).
func (tf *testFS) mapAndStore(t *testing.T, name, data string, sync bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMmapHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), mmapPathEnv+"="+tf.m(name), mmapDataEnv+"="+data)
	if sync {
		cmd.Env = append(cmd.Env, mmapSyncEnv+"=1")
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestMmapHelper is the helper process of mapAndStore; it does nothing in
// a test run.
func TestMmapHelper(t *testing.T) {
	path := os.Getenv(mmapPathEnv)
	if path == "" {
		t.Skip("the helper process of mapAndStore")
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	mem, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err, "a shared writable mapping is allowed")
	copy(mem, os.Getenv(mmapDataEnv))
	if os.Getenv(mmapSyncEnv) != "" {
		require.NoError(t, unix.Msync(mem, unix.MS_SYNC))
	}
	require.NoError(t, unix.Munmap(mem))
}

// A shared writable mapping is allowed: its stores reach the file system
// as writes when the kernel writes the pages back (at munmap at the
// latest), and are durable only once msync(MS_SYNC) or fsync made them
// so.
func TestMmapStoresAreWrites(t *testing.T) {
	page := strings.Repeat(".", 4096)
	tf := mountTest(t, map[string]string{"m": page})
	tf.mapAndStore(t, "m", "unsynced", false)
	require.Equal(t, "unsynced"+page[8:], tf.content(t, "m"))
	tf.powerLoss(t)
	assert.Equal(t, page, tf.content(t, "m"), "stores not synced are lost")

	tf.mapAndStore(t, "m", "msynced", true)
	tf.powerLoss(t)
	assert.Equal(t, "msynced"+page[7:], tf.content(t, "m"))
}
