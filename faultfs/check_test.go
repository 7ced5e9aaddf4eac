package faultfs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// What keeps a mount from starting is named in one line.
func TestCheckMountNamesWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	backing, mnt, full := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt"), filepath.Join(dir, "full")
	require.NoError(t, os.Mkdir(backing, 0o755))
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.Mkdir(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), nil, 0o644))
	dev := filepath.Join(dir, "fuse")
	require.NoError(t, os.WriteFile(dev, nil, 0o644))

	assert.NoError(t, checkMount(dev, backing, mnt))
	for _, tc := range []struct{ dev, backing, mnt, want string }{
		{filepath.Join(dir, "nofuse"), backing, mnt, "faultfs: " + dir + "/nofuse is missing (load the fuse module, or give the container the device)"},
		{dev, filepath.Join(dir, "nope"), mnt, "faultfs: backing directory " + dir + "/nope does not exist or is not a directory (create it first)"},
		{dev, dev, mnt, "faultfs: backing directory " + dev + " does not exist or is not a directory (create it first)"},
		{dev, backing, filepath.Join(dir, "nope"), "faultfs: mount directory " + dir + "/nope does not exist (create it first)"},
		{dev, backing, full, "faultfs: mount directory " + full + " is not empty (is something mounted there already?)"},
		{dev, backing, dev, "faultfs: mount directory " + dev + " is not a directory"},
	} {
		assert.EqualError(t, checkMount(tc.dev, tc.backing, tc.mnt), tc.want)
	}
}

// A mount whose server died (the connection aborted) is named as such.
func TestCheckMountNamesADeadMount(t *testing.T) {
	tf := mountTest(t, nil)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(tf.mnt, &st))
	const fusectl = "/sys/fs/fuse/connections"
	abort := fmt.Sprintf("%s/%d/abort", fusectl, unix.Minor(st.Dev))
	if _, err := os.Stat(abort); err != nil {
		if err := unix.Mount("fusectl", fusectl, "fusectl", 0, ""); err != nil {
			t.Skipf("no fusectl to abort the connection with: %v", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(fusectl, 0) })
	}
	require.NoError(t, os.WriteFile(abort, []byte("1"), 0o200))
	err := checkMount(DevFUSE, tf.backing, tf.mnt)
	assert.EqualError(t, err, "faultfs: mount directory "+tf.mnt+" is a dead FUSE mount (its server died): unmount it first (umount -l "+tf.mnt+")")
}
