package control

import (
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWrapCommand(t *testing.T) {
	cmd := `echo "it's" $HOME`
	q := `'echo "it'\''s" $HOME'`
	require.Equal(t, "sh -c "+q, wrapCommand(asRoot, cmd))
	require.Equal(t, "sudo -n -- sh -c "+q, wrapCommand(sudoNoPassword, cmd))
	require.Equal(t, "sudo -S -k -p '' -- sh -c "+q, wrapCommand(sudoPassword, cmd))
}

// TestWrapCommandRunsTheCommand: the wrapped line means the same command to
// a shell, quotes, variables, pipes, exit code and all.
func TestWrapCommandRunsTheCommand(t *testing.T) {
	cmd := `x='a b'; printf '%s|' "$x" "it's" | tr a A; echo; exit 3`
	out, err := exec.Command("sh", "-c", wrapCommand(asRoot, cmd)).Output()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 3, exit.ExitCode())
	require.Equal(t, "A b|it's|\n", string(out))
}

func TestCommandStdin(t *testing.T) {
	read := func(r io.Reader) string {
		if r == nil {
			return "<nil>"
		}
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, "<nil>", read(commandStdin(asRoot, "pw", nil)))
	require.Equal(t, "<nil>", read(commandStdin(sudoNoPassword, "pw", nil)))
	require.Equal(t, "data", read(commandStdin(sudoNoPassword, "pw", strings.NewReader("data"))))
	require.Equal(t, "pw\n", read(commandStdin(sudoPassword, "pw", nil)))
	require.Equal(t, "pw\ndata", read(commandStdin(sudoPassword, "pw", strings.NewReader("data"))))
}

func TestSudoError(t *testing.T) {
	res := func(code int, stderr string) Result { return Result{ExitCode: code, Stderr: []byte(stderr)} }
	for _, c := range []struct {
		res  Result
		want string // "" for no sudo error
	}{
		{res(0, ""), ""},
		{res(1, "grep: x: No such file or directory\n"), ""},
		{res(2, "sudo: a password is required\n"), ""},
		{res(1, "sudo: a password is required\n"),
			"n3: sudo needs the password of user bob: pass --password-file or set $CHAOS_SSH_PASSWORD, or allow NOPASSWD in sudoers"},
		{res(1, "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\n"),
			"n3: sudo needs the password of user bob: pass --password-file or set $CHAOS_SSH_PASSWORD, or allow NOPASSWD in sudoers"},
		{res(1, "Sorry, try again.\nsudo: no password was provided\nsudo: 1 incorrect password attempt\n"),
			"n3: sudo rejected the password of user bob: check --password-file or $CHAOS_SSH_PASSWORD"},
		{res(1, "bob is not in the sudoers file.\n"),
			"n3: user bob may not use sudo: add it to sudoers or use --username root"},
		{res(1, "Sorry, user bob is not allowed to execute '/bin/sh -c true' as root on n3.\n"),
			"n3: user bob may not use sudo: add it to sudoers or use --username root"},
		{res(127, "sh: 1: sudo: not found\n"),
			"n3: sudo is not installed and user bob is not root: install sudo or use --username root"},
		{res(127, "bash: line 1: sudo: command not found\n"),
			"n3: sudo is not installed and user bob is not root: install sudo or use --username root"},
		{res(127, "sh: 1: iptables: not found\n"), ""},
	} {
		err := sudoError("n3", "bob", c.res)
		if c.want == "" {
			require.NoError(t, err, "%q", c.res.Stderr)
			continue
		}
		require.EqualError(t, err, c.want, "%q", c.res.Stderr)
	}
}
