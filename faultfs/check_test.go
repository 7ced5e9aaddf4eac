package faultfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
