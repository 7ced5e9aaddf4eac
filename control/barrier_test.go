package control

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// shellBarrier holds remote commands until the test lifts it, so that a
// test can see commands running at the same time, or act while one runs,
// whatever time a session takes to start on a loaded machine. The
// commands run on this machine (the test's sshd), so a file is the signal.
type shellBarrier struct {
	dir    string
	lifted string // the file whose existence lifts the barrier
}

// newShellBarrier makes a barrier that is lifted when the test ends at the
// latest, so that no command waits at it after the test.
func newShellBarrier(t *testing.T) *shellBarrier {
	dir := t.TempDir()
	b := &shellBarrier{dir: dir, lifted: filepath.Join(dir, "lifted")}
	t.Cleanup(func() { b.lift(t) })
	return b
}

// wait is a shell command that returns once the barrier is lifted or its
// directory is gone, and after a minute at most: a failed test leaves no
// command waiting for long.
func (b *shellBarrier) wait() string {
	return fmt.Sprintf(`i=0; while [ ! -e %[1]s ] && [ -d %[2]s ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`,
		ShellQuote(b.lifted), ShellQuote(b.dir))
}

// lift lets every command waiting at the barrier, and every later one, go on.
func (b *shellBarrier) lift(t *testing.T) {
	err := os.WriteFile(b.lifted, nil, 0o644)
	if err != nil && !os.IsNotExist(err) {
		require.NoError(t, err)
	}
}
