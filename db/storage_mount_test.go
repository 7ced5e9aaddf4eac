package db

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/testbed/bedtest"
)

// A real mount on this machine, through the commands the systems run: the
// chaos binary serves the data directory (Mount), what is written through
// it is pending until fsynced, Leftovers names the process and the mount,
// and Unmount leaves neither. A second Mount of a running file system
// does nothing; after the server is killed, Mount detaches the dead mount
// and serves again.
func TestStorageMountOnThisMachine(t *testing.T) {
	bedtest.Require(t)
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	bin := bedtest.BuildChaos(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	r := control.NewLocal("n1")
	m := NewStorageMount(Node{Name: "n1"}, dir, filepath.Join(dir, "data"), &FaultFS{Binary: bin, Path: bin})
	t.Cleanup(func() { _ = m.Unmount(context.Background(), r) })
	require.NoError(t, m.Install(ctx, r))
	require.NoError(t, m.Mount(ctx, r))
	require.NoError(t, m.Mount(ctx, r), "running already: nothing to do")
	require.NoError(t, os.WriteFile(filepath.Join(m.Data, "x"), []byte("not synced"), 0o644))
	st, err := m.Host().Status(ctx, r)
	require.NoError(t, err)
	assert.Positive(t, st.PendingFiles)
	left, err := m.Leftovers(ctx, r)
	require.NoError(t, err)
	require.Len(t, left, 2, "%q", left)
	assert.True(t, strings.HasPrefix(left[0], "fault file system process "), left[0])
	assert.Equal(t, "fault file system mounted at "+m.Data, left[1])

	p, err := m.Daemon.Process(ctx, r)
	require.NoError(t, err)
	require.NoError(t, syscallKill(p.Pid))
	require.Eventually(t, func() bool { q, _ := m.Daemon.Process(ctx, r); return q.Pid == 0 }, 10*time.Second, 50*time.Millisecond)
	require.NoError(t, m.Mount(ctx, r), "a dead mount is detached and served again")
	b, err := os.ReadFile(filepath.Join(m.Data, "x"))
	require.NoError(t, err)
	assert.Equal(t, "not synced", string(b), "the backing directory kept what was written")

	require.NoError(t, m.Unmount(ctx, r))
	left, err = m.Leftovers(ctx, r)
	require.NoError(t, err)
	assert.Empty(t, left)
	require.NoError(t, m.Wipe(ctx, r))
	_, err = os.Stat(m.Backing)
	assert.True(t, os.IsNotExist(err), "backing wiped")
}

// syscallKill sends SIGKILL to pid.
func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
