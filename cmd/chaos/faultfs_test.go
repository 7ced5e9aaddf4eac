package main

import (
	"bytes"
	"chaos/testbed/bedtest"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/faultfs"
)

// Bad flags are one line and exit 254; what keeps serve from mounting,
// and a file system that is not there, are one line and exit 255.
func TestFaultFSRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	full := filepath.Join(dir, "full")
	require.NoError(t, os.MkdirAll(filepath.Join(full, "x"), 0o755))
	for _, tc := range []struct {
		args []string
		want int
		line string
	}{
		{[]string{"faultfs", "serve", "--backing", dir}, exitUsage, "chaos: faultfs serve: --backing, --mount and --control are required\n"},
		{[]string{"faultfs", "serve", "--backing", dir, "--mount", dir, "--control", sock, "--names", "ext4"}, exitUsage,
			"chaos: faultfs serve: --names: names model \"ext4\": want posix or ordered\n"},
		{[]string{"faultfs", "serve", "--backing", dir, "--mount", dir, "--control", sock, "--undo-memory-mib", "0"}, exitUsage,
			"chaos: faultfs serve: --undo-memory-mib 0: want 1 to 1048576\n"},
		{[]string{"faultfs", "status"}, exitUsage, "chaos: faultfs status: --control is required\n"},
		{[]string{"faultfs", "errors", "--control", sock, "--kind", "full"}, exitUsage, "chaos: faultfs errors: error kind \"full\": want enospc or eio\n"},
		{[]string{"faultfs", "errors", "--control", sock, "--kind", "eio", "--on", "reads"}, exitUsage, "chaos: faultfs errors: errors on \"reads\": want writes, fsyncs or both\n"},
		{[]string{"faultfs", "errors", "--control", sock, "--kind", "eio", "--for", "-1s"}, exitUsage, "chaos: faultfs errors: --for -1s is negative\n"},
		{[]string{"faultfs", "errors", "--control", sock, "--kind", "eio", "--for", "25h"}, exitUsage, "chaos: faultfs errors: --for 25h0m0s is past the limit of 24h\n"},
		{[]string{"faultfs", "serve", "--backing", filepath.Join(dir, "nope"), "--mount", dir, "--control", sock}, exitSetup,
			"chaos: faultfs: backing directory " + dir + "/nope does not exist or is not a directory (create it first)\n"},
		{[]string{"faultfs", "serve", "--backing", dir, "--mount", full, "--control", sock}, exitSetup,
			"chaos: faultfs: mount directory " + full + " is not empty (is something mounted there already?)\n"},
		{[]string{"faultfs", "power-loss", "--control", sock, "--timeout", "100ms"}, exitSetup, ""},
	} {
		var errOut bytes.Buffer
		assert.Equal(t, tc.want, runWith(tc.args, &errOut), "%v: %s", tc.args, errOut.String())
		if tc.line != "" {
			assert.Equal(t, tc.line, errOut.String(), "%v", tc.args)
		}
		assert.Equal(t, 1, bytes.Count(errOut.Bytes(), []byte("\n")), "%v: one line: %q", tc.args, errOut.String())
	}
}

// The client commands talk to a running file system and print its
// answers.
func TestFaultFSClientCommands(t *testing.T) {
	bedtest.RequireFUSE(t)
	dir := t.TempDir()
	backing, mnt, sock := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt"), filepath.Join(dir, "control.sock")
	require.NoError(t, os.Mkdir(backing, 0o755))
	require.NoError(t, os.Mkdir(mnt, 0o755))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- faultfs.Run(ctx, backing, mnt, sock, faultfs.Options{}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	chaos := func(args ...string) string {
		t.Helper()
		cmd := newRootCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(append([]string{"faultfs"}, args...))
		require.NoError(t, cmd.Execute(), "%v", args)
		return out.String()
	}
	assert.JSONEq(t, `{"pending_files":0,"undo_bytes":0,"pending_names":0}`, chaos("status", "--control", sock))
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "f"), []byte("x"), 0o644))
	assert.JSONEq(t, `{"pending_files":1,"undo_bytes":0,"pending_names":1,"errors":{"kind":"enospc","on":"writes"}}`,
		chaos("errors", "--control", sock, "--kind", "enospc", "--on", "writes"))
	var st faultfs.Status
	require.NoError(t, json.Unmarshal([]byte(chaos("errors", "--control", sock, "--kind", "eio", "--for", "1m")), &st))
	assert.Equal(t, faultfs.OnBoth, st.Errors.On)
	assert.NotNil(t, st.Errors.Until)
	assert.JSONEq(t, `{"pending_files":1,"undo_bytes":0,"pending_names":1}`, chaos("clear", "--control", sock))
	assert.JSONEq(t, `{"dropped":{"pending_files":1,"undo_bytes":0,"pending_names":1}}`, chaos("power-loss", "--control", sock))
	_, err := os.Stat(filepath.Join(mnt, "f"))
	assert.True(t, os.IsNotExist(err))
}
