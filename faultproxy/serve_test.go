package faultproxy

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runUntilUp runs the proxy in dir until the test ends, and returns once
// its control socket answers.
func runUntilUp(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{Dir: dir, Log: slog.New(slog.DiscardHandler)}) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	setCtx, setCancel := context.WithTimeout(ctx, 10*time.Second)
	defer setCancel()
	st, err := SetLinks(setCtx, ControlSocket(dir), "n1", nil)
	require.NoError(t, err)
	assert.Equal(t, Conns{Max: DefaultMaxConns}, st.Conns)
}

func requireMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, want, fi.Mode().Perm(), "mode of %s", path)
}

// The proxy's directory ends up mode 0700 whoever made it: Run makes a
// missing one so, and narrows one of its user's that a `mkdir -p` made
// 0755 before it ran.
func TestRunLeavesItsDirectoryPrivate(t *testing.T) {
	t.Run("made before, 0755", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "fault-proxy")
		require.NoError(t, os.Mkdir(dir, 0o755))
		require.NoError(t, os.Chmod(dir, 0o755)) // whatever the umask
		runUntilUp(t, dir)
		requireMode(t, dir, 0o700)
		requireMode(t, ControlSocket(dir), 0o600)
	})
	t.Run("missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data", "fault-proxy")
		runUntilUp(t, dir)
		requireMode(t, dir, 0o700)
	})
}

// A directory another user owns, a symbolic link or a file in the
// directory's place is refused with one line, and left as it was.
func TestPrivateDirRefusesWhatIsNotItsOwn(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "fault-proxy")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	other := os.Geteuid() + 1
	err := privateDir(dir, other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "belongs to uid")
	assert.NotContains(t, err.Error(), "\n")
	requireMode(t, dir, 0o755)

	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(dir, link))
	assert.EqualError(t, privateDir(link, os.Geteuid()), link+" is a symbolic link, not a directory: refused")
	requireMode(t, dir, 0o755)

	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	assert.ErrorContains(t, privateDir(file, os.Geteuid()), "not a directory")

	require.NoError(t, privateDir(dir, os.Geteuid()))
	requireMode(t, dir, 0o700)
}

// Run refuses a cap out of bounds before it makes anything.
func TestRunRefusesABadCap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fault-proxy")
	err := Run(context.Background(), Config{Dir: dir, MaxConns: MaxConnsLimit + 1})
	assert.EqualError(t, err, "fault proxy: at most 4097 connections at once is outside [1, 4096]")
	assert.NoDirExists(t, dir)
}
