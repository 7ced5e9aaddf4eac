package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// requireNoTemp fails when a temporary file or link of path is left.
func requireNoTemp(t *testing.T, path string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".*"+tempSuffix))
	require.NoError(t, err)
	require.Empty(t, left, "the temporary file is removed")
}

func TestWriteFileReplacesContentAndSetsPerm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("old content, longer than the new"), 0o644))
	require.NoError(t, WriteFile(path, []byte("new"), 0o600))
	require.Equal(t, "new", readString(t, path))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	requireNoTemp(t, path)
}

func TestPermIgnoresTheUmask(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, WriteFile(path, []byte("x"), 0o777))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o777), info.Mode().Perm())
}

// TestReaderSeesOldContentUntilCommit: while the new content is written,
// path still holds the old one, whole.
func TestReaderSeesOldContentUntilCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	f, err := Create(path, 0o644)
	require.NoError(t, err)
	_, err = io.WriteString(f, "new")
	require.NoError(t, err)
	require.Equal(t, "old", readString(t, path))
	require.NoError(t, f.Commit())
	require.Equal(t, "new", readString(t, path))
	f.Abort() // after Commit: nothing to do
	require.Equal(t, "new", readString(t, path))
}

func TestWriteFuncErrorLeavesTargetAndRemovesTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o640))
	failed := errors.New("the write failed")
	err := WriteFunc(path, 0o600, func(w io.Writer) error {
		_, _ = io.WriteString(w, "part of the new")
		return failed
	})
	require.Same(t, failed, err, "the write's error is returned as it is")
	require.Equal(t, "old", readString(t, path))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), info.Mode().Perm(), "the target's mode is untouched")
	requireNoTemp(t, path)
}

func TestAbortLeavesNoFileWhereNoneWas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := Create(path, 0o644)
	require.NoError(t, err)
	_, err = io.WriteString(f, "new")
	require.NoError(t, err)
	f.Abort()
	require.NoFileExists(t, path)
	requireNoTemp(t, path)
	require.NoError(t, f.Commit(), "Commit after Abort does nothing")
	require.NoFileExists(t, path)
}

// TestLeftoverTempIsLeftAlone: a temporary file a crash left behind (under
// the fixed name of older versions, or a name of its own) is neither
// reused nor leaks into the next content.
func TestLeftoverTempIsLeftAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	left := filepath.Join(filepath.Dir(path), ".f.leftover"+tempSuffix)
	for _, p := range []string{path + tempSuffix, left} {
		require.NoError(t, os.WriteFile(p, []byte("half-written by a crashed writer"), 0o600))
	}
	names := plantedNames(left)
	f, err := create(path, 0o644, names.next)
	require.NoError(t, err)
	_, err = io.WriteString(f, "new")
	require.NoError(t, err)
	require.NoError(t, f.Commit())
	require.Equal(t, "new", readString(t, path))
	require.Equal(t, "half-written by a crashed writer", readString(t, left))
	require.Equal(t, "half-written by a crashed writer", readString(t, path+tempSuffix))
	require.Len(t, names.tried, 2, "the leftover's name was skipped")
}

func TestCreateErrorNamesTheTemporaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "f")
	err := WriteFile(path, []byte("x"), 0o644)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "open "+filepath.Dir(path)+"/.f.")
}

func TestRenameErrorLeavesTargetAndRemovesTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), nil, 0o644))
	err := WriteFile(path, []byte("x"), 0o644) // a file cannot replace a non-empty directory
	require.Error(t, err)
	require.DirExists(t, path)
	requireNoTemp(t, path)
}

// TestDirSyncErrorComesAfterTheRename: the error of step 4 is returned, and
// the new content is already in place.
func TestDirSyncErrorComesAfterTheRename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	f, err := Create(path, 0o644)
	require.NoError(t, err)
	injected := errors.New("fsync dir: injected")
	var synced string
	f.syncDir = func(dir string) error { synced = dir; return injected }
	_, err = io.WriteString(f, "new")
	require.NoError(t, err)
	require.Same(t, injected, f.Commit())
	require.Equal(t, filepath.Dir(path), synced)
	require.Equal(t, "new", readString(t, path))
	requireNoTemp(t, path)
}

func TestSyncDirErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	err := SyncDir(missing)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "open dir "+missing+" for fsync")
}

func TestSymlinkReplacesLink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "latest")
	require.NoError(t, Symlink("a", path))
	require.NoError(t, os.WriteFile(path+tempSuffix, nil, 0o644)) // a crash's leftover
	require.NoError(t, Symlink("b", path))
	got, err := os.Readlink(path)
	require.NoError(t, err)
	require.Equal(t, "b", got)
	requireNoTemp(t, path)
}

func TestSymlinkRenameErrorLeavesTargetAndRemovesTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), nil, 0o644))
	require.Error(t, Symlink("b", path))
	require.DirExists(t, path)
	requireNoTemp(t, path)
}
