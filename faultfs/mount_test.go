package faultfs

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"chaos/testbed/bedtest"
)

// testFS is a fault file system mounted for one test: what the backing
// directory held before (seed: name -> content) is durable.
type testFS struct {
	*FS
	backing, mnt string
	clock        atomic.Pointer[time.Time] // the time injected errors see
}

func mountTest(t *testing.T, seed map[string]string) *testFS {
	t.Helper()
	return mountTestOpts(t, seed, Options{})
}

// mountTestModel is mountTest with the names model.
func mountTestModel(t *testing.T, seed map[string]string, model Names) *testFS {
	t.Helper()
	return mountTestOpts(t, seed, Options{Names: model})
}

// mountTestOpts is mountTest with the file system's options.
func mountTestOpts(t *testing.T, seed map[string]string, opts Options) *testFS {
	t.Helper()
	bedtest.RequireFUSE(t)
	tf := &testFS{backing: filepath.Join(t.TempDir(), "backing"), mnt: filepath.Join(t.TempDir(), "mnt")}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tf.clock.Store(&start)
	require.NoError(t, os.Mkdir(tf.backing, 0o755))
	require.NoError(t, os.Mkdir(tf.mnt, 0o755))
	for name, content := range seed {
		p := filepath.Join(tf.backing, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	fsys, err := Mount(tf.backing, tf.mnt, func() time.Time { return *tf.clock.Load() }, opts)
	require.NoError(t, err)
	tf.FS = fsys
	t.Cleanup(func() { assert.NoError(t, fsys.Unmount()) })
	return tf
}

// m is the path of name in the mount.
func (tf *testFS) m(name string) string { return filepath.Join(tf.mnt, name) }

// powerLoss simulates a power loss and fails the test if it fails.
func (tf *testFS) powerLoss(t *testing.T) {
	t.Helper()
	_, err := tf.PowerLoss()
	require.NoError(t, err)
}

// content is what name holds, read through the mount and in the backing
// directory (they must agree); "<absent>" if there is no such file.
func (tf *testFS) content(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tf.backing, name))
	if os.IsNotExist(err) {
		_, err := os.Lstat(tf.m(name))
		assert.True(t, os.IsNotExist(err), "%s is absent from the backing directory but not from the mount: %v", name, err)
		return "<absent>"
	}
	require.NoError(t, err)
	viaMount, err := os.ReadFile(tf.m(name))
	require.NoError(t, err)
	assert.Equal(t, string(b), string(viaMount), "%s: the mount and the backing directory differ", name)
	return string(b)
}

// write opens name in the mount with flags, writes data and, when sync
// is "fsync" or "fdatasync", syncs it.
func (tf *testFS) write(t *testing.T, name string, flags int, data, sync string) {
	t.Helper()
	f, err := os.OpenFile(tf.m(name), flags, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString(data)
	require.NoError(t, err)
	tf.sync(t, f, sync)
}

// syncDir fsyncs the directory name of the mount ("" is its root).
func (tf *testFS) syncDir(t *testing.T, name string) {
	t.Helper()
	d, err := os.Open(tf.m(name))
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Sync())
}

// sync syncs f as how says: "fsync", "fdatasync", or "" (not at all).
func (tf *testFS) sync(t *testing.T, f *os.File, how string) {
	t.Helper()
	switch how {
	case "fsync":
		require.NoError(t, f.Sync())
	case "fdatasync":
		require.NoError(t, unix.Fdatasync(int(f.Fd())))
	case "":
	default:
		t.Fatalf("sync %q", how)
	}
}
