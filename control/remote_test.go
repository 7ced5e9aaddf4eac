package control

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResultErr(t *testing.T) {
	require.NoError(t, Result{ExitCode: 0, Stderr: []byte("warning")}.Err("n3", "true"))

	err := Result{ExitCode: 2, Stderr: []byte("\n  cat: /x: No such file or directory \nmore\n")}.Err("n3", "cat /x")
	require.EqualError(t, err, "n3: `cat /x` exited 2: cat: /x: No such file or directory")
	var exit *ExitError
	require.True(t, errors.As(err, &exit))
	require.Equal(t, 2, exit.ExitCode)

	require.EqualError(t, Result{ExitCode: 137}.Err("n1", "sleep 9"), "n1: `sleep 9` exited 137")
}

func TestExitErrorIsOneLine(t *testing.T) {
	cmd := "for i in 1 2 3\ndo echo " + strings.Repeat("x", 200) + "\ndone"
	err := Result{ExitCode: 1, Stderr: []byte(strings.Repeat("e", 1000))}.Err("n2", cmd)
	msg := err.Error()
	require.NotContains(t, msg, "\n")
	require.True(t, strings.HasPrefix(msg, "n2: `for i in 1 2 3` exited 1: eee"), msg)
	require.Less(t, len([]rune(msg)), 400)
}

func TestSignalExitCode(t *testing.T) {
	require.Equal(t, 137, signalExitCode("KILL"))
	require.Equal(t, 143, signalExitCode("TERM"))
	require.Equal(t, 255, signalExitCode("NOSUCH"))
}

func TestOutput(t *testing.T) {
	r := NewLocal("n1")
	out, err := Output(context.Background(), r, "echo hi")
	require.NoError(t, err)
	require.Equal(t, "hi\n", string(out))

	out, err = Output(context.Background(), r, "echo partial; echo boom >&2; exit 4")
	require.EqualError(t, err, "n1: `echo partial; echo boom >&2; exit 4` exited 4: boom")
	require.Equal(t, "partial\n", string(out))
}
