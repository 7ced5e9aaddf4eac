package faultfs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// mapAndStore maps name shared and writable, stores data at its start,
// and unmaps it after msync(MS_SYNC) when sync is set.
func (tf *testFS) mapAndStore(t *testing.T, name, data string, sync bool) {
	t.Helper()
	f, err := os.OpenFile(tf.m(name), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	mem, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err, "a shared writable mapping is allowed")
	copy(mem, data)
	if sync {
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
