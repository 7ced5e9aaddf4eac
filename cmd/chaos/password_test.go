package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The password comes from the first line of --password-file, else
// --password, else $CHAOS_SSH_PASSWORD; a flag wins over the environment.
func TestSSHPasswordSources(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	t.Setenv("CHAOS_SSH_PASSWORD", "from-env")
	for _, c := range []struct {
		name string
		h    hostFlags
		want string
	}{
		{"file, newline stripped", hostFlags{passwordFile: file("nl", "from file\n")}, "from file"},
		{"file, CRLF stripped", hostFlags{passwordFile: file("crlf", "from-file\r\nsecond line\n")}, "from-file"},
		{"file without newline", hostFlags{passwordFile: file("bare", " spaces kept ")}, " spaces kept "},
		{"flag", hostFlags{password: "from-flag"}, "from-flag"},
		{"environment", hostFlags{}, "from-env"},
	} {
		got, err := c.h.sshPassword()
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
	t.Setenv("CHAOS_SSH_PASSWORD", "")
	got, err := hostFlags{}.sshPassword()
	require.NoError(t, err)
	assert.Empty(t, got, "no password at all")
}

// A password file that cannot be used, or both password flags, is one
// line and exit 254 before anything is written; the error never holds
// the file's content.
func TestPasswordFileRefused(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	unreadable := write("unreadable", "hunter2-unreadable\n")
	require.NoError(t, os.Chmod(unreadable, 0))
	long := write("long", strings.Repeat("hunter2-", 600)+"\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--password-file", filepath.Join(dir, "missing")}, "no such file or directory"},
		{[]string{"--password-file", write("empty", "")}, "the first line is empty"},
		{[]string{"--password-file", write("blank", "\nhunter2-second-line\n")}, "the first line is empty"},
		{[]string{"--password-file", dir}, "is a directory"},
		{[]string{"--password-file", long}, "longer than 4096 bytes"},
		{[]string{"--password-file", "/dev/zero"}, "longer than 4096 bytes"},
		{[]string{"--password-file", write("ok", "pw\n"), "--password", "hunter2-both"}, "give --password-file or --password, not both"},
	}
	if os.Geteuid() != 0 { // root reads any file
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"--password-file", unreadable}, "permission denied"})
	}
	for _, c := range cases {
		for _, command := range [][]string{{"run", "--store", store}, {"bench"}, {"heal", "--db", "chaos-node", "--nodes", "h1"}, {"test-all", "--campaign", "x.yaml"}} {
			args := append(append([]string{}, command...), c.args...)
			code, out, errOut := execute(t, args...)
			assert.Equal(t, exitUsage, code, "chaos %v: %s", args, errOut)
			assert.Contains(t, errOut, c.want, "chaos %v", args)
			assert.NotContains(t, errOut, "hunter2", "chaos %v", args)
			assert.Empty(t, out, "chaos %v", args)
			assert.Equal(t, 0, strings.Count(strings.TrimSpace(strings.TrimPrefix(errOut, passwordWarning(errOut))), "\n"),
				"chaos %v: one line: %q", args, errOut)
		}
	}
	_, err := os.Stat(store)
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused password file wrote into the store")
}

// passwordWarning is the --password warning line at the start of errOut,
// or "".
func passwordWarning(errOut string) string {
	line, _, _ := strings.Cut(errOut, "\n")
	if strings.HasPrefix(line, "chaos: warning: --password ") {
		return line + "\n"
	}
	return ""
}

// --password still works, with one warning line that names the two
// alternatives and not the password.
func TestPasswordFlagWarns(t *testing.T) {
	for _, command := range [][]string{{"run", "--concurrency", "0"}, {"bench", "--clients", "0"}, {"heal", "--timeout", "0s"}, {"test-all"}} {
		args := append(command, "--password", "hunter2-flag")
		_, _, errOut := execute(t, args...)
		assert.Equal(t, "chaos: warning: --password is visible to other users (ps, shell history); use --password-file FILE or $CHAOS_SSH_PASSWORD instead\n",
			passwordWarning(errOut), "chaos %v", args)
		assert.NotContains(t, errOut, "hunter2", "chaos %v", args)
		_, _, errOut = execute(t, append(command, "--password-file", "/nonexistent")...)
		assert.Empty(t, passwordWarning(errOut), "chaos %v --password-file", command)
	}
}

// The replay command shows --password-file FILE as given, and
// <redacted> for --password.
func TestReplayCommandRedactsThePassword(t *testing.T) {
	ro := &runOptions{}
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	ro.register(f)
	require.NoError(t, f.Parse([]string{"--password", "hunter2 replay", "--time-limit", "5s"}))
	assert.Equal(t, "chaos run --password '<redacted>' --time-limit 5s --seed 9", replayCommand(f, 9))

	f = pflag.NewFlagSet("run", pflag.ContinueOnError)
	ro.register(f)
	require.NoError(t, f.Parse([]string{"--password-file", "/etc/chaos pw", "--time-limit", "5s"}))
	assert.Equal(t, "chaos run --password-file '/etc/chaos pw' --time-limit 5s --seed 9", replayCommand(f, 9))
}
