package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nobody is the uid of nobody, another user than the one running the tests
// (root, or a user whose directories root could chown).
const nobody = 65534

// A missing directory is created 0700 whatever the umask; one of the user's
// that others may only read is made private; one already private is left.
func TestPrepareLocalDirCreatesAPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chaos-local")
	require.NoError(t, prepareLocalDir(dir, os.Getuid()))
	requireMode(t, dir, 0o700)
	require.NoError(t, prepareLocalDir(dir, os.Getuid()), "again")
	requireMode(t, dir, 0o700)

	require.NoError(t, os.Chmod(dir, 0o755)) // what older versions made
	require.NoError(t, prepareLocalDir(dir, os.Getuid()))
	requireMode(t, dir, 0o700)
}

func requireMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Lstat(path)
	require.NoError(t, err)
	require.True(t, info.IsDir())
	require.Equal(t, want, info.Mode().Perm())
}

// A directory someone else could have made or written into is refused with
// one line saying why and how to fix it, and left as it was.
func TestPrepareLocalDirRefusesAPlantedDirectory(t *testing.T) {
	cases := map[string]struct {
		plant func(t *testing.T, dir string)
		want  string
	}{
		"another owner": {func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			if err := os.Chown(dir, nobody, nobody); err != nil {
				t.Fatalf("chown to nobody (the tests run as root): %v", err)
			}
		}, "belongs to uid 65534, not to uid"},
		"writable by all": {func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, 0o777))
		}, "has mode 0777, writable by others"},
		"writable by the group": {func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, 0o770))
		}, "has mode 0770, writable by others"},
		"a symlink to a private directory": {func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(t.TempDir(), dir))
		}, "is a symlink, which someone else may have planted"},
		"a file": {func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(dir, nil, 0o600))
		}, "is not a directory"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "chaos-local")
			c.plant(t, dir)
			before, err := os.Lstat(dir)
			require.NoError(t, err)
			err = prepareLocalDir(dir, os.Getuid())
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, "refused; remove it (rm -rf "+dir+")")
			assert.NotContains(t, err.Error(), "\n")
			after, err := os.Lstat(dir)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "left as it was")
		})
	}
}
