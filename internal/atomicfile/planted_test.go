package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// plantedNamesSeq is a tempNames that returns the given names first, then
// fresh ones, and records every name it gave.
type plantedNamesSeq struct {
	planted []string
	tried   []string
}

func plantedNames(planted ...string) *plantedNamesSeq { return &plantedNamesSeq{planted: planted} }

func (p *plantedNamesSeq) next(path string) string {
	name := fmt.Sprintf("%s/.%s.fresh%d%s", filepath.Dir(path), filepath.Base(path), len(p.tried), tempSuffix)
	if len(p.tried) < len(p.planted) {
		name = p.planted[len(p.tried)]
	}
	p.tried = append(p.tried, name)
	return name
}

// victim is a file outside the directory written to, as a planted link
// would aim at: /etc/shadow to a chaos run as root.
func victim(t *testing.T) string {
	t.Helper()
	v := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(v, []byte("secret"), 0o600))
	return v
}

func requireUntouched(t *testing.T, v string) {
	t.Helper()
	require.Equal(t, "secret", readString(t, v))
	info, err := os.Stat(v)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the victim's mode is untouched")
}

// A symlink planted at a temporary name (at the fixed name older versions
// used, and at the name chaos tries, a live link and a dangling one) is
// never written through or chmodded: the write goes to another name and
// the links stay as they were.
func TestPlantedSymlinkAtATempNameIsNotWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	v := victim(t)
	dangling := filepath.Join(t.TempDir(), "would-be-created")
	live, dead := filepath.Join(dir, ".results.json.a.tmp"), filepath.Join(dir, ".results.json.b.tmp")
	require.NoError(t, os.Symlink(v, path+tempSuffix))
	require.NoError(t, os.Symlink(v, live))
	require.NoError(t, os.Symlink(dangling, dead))

	names := plantedNames(path+tempSuffix, live, dead)
	f, err := create(path, 0o644, names.next)
	require.NoError(t, err)
	_, err = io.WriteString(f, "new")
	require.NoError(t, err)
	require.NoError(t, f.Commit())

	require.Equal(t, "new", readString(t, path))
	requireUntouched(t, v)
	require.NoFileExists(t, dangling, "a dangling link's target is not created")
	require.Len(t, names.tried, 4, "three planted names skipped, the fourth used")
	for _, l := range []string{path + tempSuffix, live, dead} {
		info, err := os.Lstat(l)
		require.NoError(t, err)
		require.Equal(t, os.ModeSymlink, info.Mode().Type(), "%s is still the planted link", l)
	}
}

// The real names are new each time: a link planted at the old fixed name
// is not followed by WriteFile either.
func TestWriteFileIgnoresALinkAtTheOldFixedName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	v := victim(t)
	require.NoError(t, os.Symlink(v, path+tempSuffix))
	require.NoError(t, WriteFile(path, []byte("new"), 0o644))
	require.Equal(t, "new", readString(t, path))
	requireUntouched(t, v)
}

// When every name tried is taken, the write fails and touches nothing.
func TestEveryTempNameTakenFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	v := victim(t)
	link := filepath.Join(dir, ".f.x.tmp")
	require.NoError(t, os.Symlink(v, link))
	always := func(string) string { return link }
	_, err := create(path, 0o644, always)
	require.ErrorIs(t, err, os.ErrExist)
	require.NoFileExists(t, path)
	requireUntouched(t, v)
	require.ErrorIs(t, symlink("target", path, always), os.ErrExist)
	_, err = os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Symlink skips a name that is taken, and leaves what is there alone.
func TestSymlinkSkipsATakenName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "latest")
	v := victim(t)
	taken := filepath.Join(dir, ".latest.x.tmp")
	require.NoError(t, os.Symlink(v, taken))
	require.NoError(t, symlink("run-1", path, plantedNames(taken).next))
	got, err := os.Readlink(path)
	require.NoError(t, err)
	require.Equal(t, "run-1", got)
	got, err = os.Readlink(taken)
	require.NoError(t, err)
	require.Equal(t, v, got)
	requireUntouched(t, v)
}
