package control

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// procsWith lists the command lines of live processes containing marker.
func procsWith(t *testing.T, marker string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	var found []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process exited meanwhile
		}
		if cmd := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})); strings.Contains(cmd, marker) {
			found = append(found, cmd)
		}
	}
	return found
}

// randomFile writes n random bytes to a new file in dir.
func randomFile(t *testing.T, dir string, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	_, err := rand.Read(data)
	require.NoError(t, err)
	return writeFile(t, dir, "src", string(data)), data
}

func TestLocalUploadDownloadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src, data := randomFile(t, dir, 8<<20)
	r := NewLocal("n1")
	ctx := context.Background()

	dst := filepath.Join(dir, "uploaded")
	require.NoError(t, os.WriteFile(dst, []byte("old"), 0o600))
	require.NoError(t, r.Upload(ctx, src, dst, 0o750))
	got, err := os.ReadFile(dst)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
	info, err := os.Stat(dst)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o750), info.Mode().Perm())
	requireNoTemp(t, dst)

	back := filepath.Join(dir, "back")
	require.NoError(t, r.Download(ctx, dst, back))
	got, err = os.ReadFile(back)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
	info, err = os.Stat(back)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}

func TestLocalTransferErrorsNameHostAndPath(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "src", "data")
	r := NewLocal("n1")
	ctx := context.Background()

	dst := filepath.Join(dir, "no", "such", "dir", "f")
	err := r.Upload(ctx, src, dst, 0o644)
	require.ErrorContains(t, err, "n1: upload "+src+" to "+dst+": open "+filepath.Dir(dst)+"/.f.")
	require.ErrorIs(t, err, os.ErrNotExist)

	missing := filepath.Join(dir, "missing")
	require.EqualError(t, r.Upload(ctx, missing, filepath.Join(dir, "x"), 0o644),
		"n1: upload: open "+missing+": no such file or directory")
	require.EqualError(t, r.Download(ctx, missing, filepath.Join(dir, "x")),
		"n1: download: open "+missing+": no such file or directory")
}

// requireDevFull fails the test unless /dev/full is the device whose
// writes fail with ENOSPC, which the disk-full tests stand on.
func requireDevFull(t *testing.T) {
	info, err := os.Stat("/dev/full")
	require.NoError(t, err)
	require.NotZero(t, info.Mode()&os.ModeCharDevice, "/dev/full is not a character device")
}

// TestLocalUploadDiskFull: a write failing with ENOSPC, as on a full disk,
// is said plainly on one line. (The temporary file has a new name each
// time and links are never followed, so /dev/full cannot stand in for it.)
func TestLocalUploadDiskFull(t *testing.T) {
	err := transferError("n1", "upload a to b", &os.PathError{Op: "write", Path: "/x/.b.1.tmp", Err: syscall.ENOSPC})
	require.EqualError(t, err, "n1: upload a to b: disk full: write /x/.b.1.tmp: no space left on device")
	require.ErrorIs(t, err, syscall.ENOSPC)
}

func TestLocalUploadStopsWhenContextEnds(t *testing.T) {
	dir := t.TempDir()
	src, _ := randomFile(t, dir, 1<<20)
	dst := filepath.Join(dir, "f")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := NewLocal("n1").Upload(ctx, src, dst, 0o644)
	require.ErrorIs(t, err, context.Canceled)
	require.NoFileExists(t, dst)
	requireNoTemp(t, dst)
}

// requireNoTemp fails when a temporary file of path (package atomicfile's
// hidden ".BASE.*.tmp", or the older fixed "BASE.tmp") is left.
func requireNoTemp(t *testing.T, path string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp"))
	require.NoError(t, err)
	require.Empty(t, left)
	require.NoFileExists(t, path+".tmp")
}

// Commands run locally (local-mode nodes, hooks) do not inherit the
// password chaos was given in its environment; the rest of it they do.
func TestLocalRunHidesTheSecretEnvironment(t *testing.T) {
	t.Setenv("CHAOS_SSH_PASSWORD", "hunter2-in-env")
	t.Setenv("CHAOS_TEST_OTHER", "kept")
	res, err := NewLocal("n1").Run(context.Background(), "env")
	require.NoError(t, err)
	require.NotContains(t, string(res.Stdout), "hunter2-in-env")
	require.Contains(t, string(res.Stdout), "CHAOS_TEST_OTHER=kept")
}
