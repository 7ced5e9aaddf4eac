package wal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The lock tests re-execute the test binary as a child process that opens a
// WAL directory. The child's role comes from these environment variables.
const (
	childRoleEnv = "CHAOS_WAL_TEST_CHILD_ROLE"
	childDirEnv  = "CHAOS_WAL_TEST_CHILD_DIR"

	roleTry  = "try"  // Open once, report the outcome by exit code
	roleHold = "hold" // Open, print "locked", hold until stdin closes

	exitOpened = 0
	exitLocked = 10 // Open failed with ErrLocked
	exitFailed = 11 // any other failure
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childRoleEnv); role != "" {
		os.Exit(runChild(role, os.Getenv(childDirEnv)))
	}
	os.Exit(m.Run())
}

// runChild plays a child process role and returns its exit code.
func runChild(role, dir string) int {
	w, err := Open(dir, Options{NoSync: true})
	if errors.Is(err, ErrLocked) {
		fmt.Println(err)
		return exitLocked
	}
	if err != nil {
		fmt.Println(err)
		return exitFailed
	}
	defer w.Close()
	if role == roleHold {
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
	}
	return exitOpened
}

func childCommand(role, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRoleEnv+"="+role, childDirEnv+"="+dir)
	return cmd
}

func TestSecondOpenInProcessIsLocked(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err)

	_, err = Open(dir, Options{NoSync: true})
	require.ErrorIs(t, err, ErrLocked)
	assert.Contains(t, err.Error(), dir)
	assert.Contains(t, err.Error(), "another process holds it")

	require.NoError(t, w.Close())
	w, err = Open(dir, Options{NoSync: true})
	require.NoError(t, err, "Close releases the lock")
	require.NoError(t, w.Close())
}

func TestOpenFromAnotherProcessIsLocked(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err)
	defer w.Close()

	out, err := childCommand(roleTry, dir).Output()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "child output: %s", out)
	assert.Equal(t, exitLocked, exit.ExitCode(), "child output: %s", out)
	assert.Contains(t, string(out), dir)
	assert.Contains(t, string(out), "another process holds it")
}

// startHolder starts a child that holds the lock on dir and returns once it
// has it. Closing stdin lets the child close the WAL and exit.
func startHolder(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := childCommand(roleHold, dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	return cmd, stdin
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd, stdin := startHolder(t, dir)

	_, err := Open(dir, Options{NoSync: true})
	require.ErrorIs(t, err, ErrLocked)

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	w, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err, "the lock is free once the holder closed the WAL")
	require.NoError(t, w.Close())
}

func TestLockReleasedWhenHolderIsKilled(t *testing.T) {
	dir := t.TempDir()
	cmd, _ := startHolder(t, dir)

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())

	w, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err, "the kernel drops the lock of a killed process")
	require.NoError(t, w.Close())
}
