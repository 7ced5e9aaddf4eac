package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A store that is not there, or not a directory, and a bad --addr are one
// line and exit 254, before anything listens.
func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--store", filepath.Join(dir, "missing")},
			"serve: store " + filepath.Join(dir, "missing") + " does not exist; give --store the directory chaos run --store wrote"},
		{[]string{"serve", "--store", file}, "serve: store " + file + " is not a directory"},
		{[]string{"serve", "--store", dir, "--addr", "8080"}, `serve: --addr "8080": address 8080: missing port in address; give host:port`},
		{[]string{"serve", "extra"}, `unknown command "extra"`},
	} {
		code, out, stderr := execute(t, c.args...)
		assert.Equal(t, exitUsage, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
		assert.NotContains(t, stderr, "\n", "one line")
		assert.Empty(t, out, c.args)
	}
}

// chaos serve prints its URL, serves the store there, and stops cleanly,
// exit 0, when its context ends (as SIGINT and SIGTERM end it).
func TestServePrintsItsURLAndStopsCleanly(t *testing.T) {
	store := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(store, "a-test", "20260101T000000.000Z"), 0o755))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	root := newRootCmd()
	root.SetOut(outW)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"serve", "--store", store, "--addr", "127.0.0.1:0"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); outW.Close() }()

	line, err := bufio.NewReader(outR).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, outR)
	real, err := filepath.EvalSymlinks(store)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "serving "+real+" at http://127.0.0.1:"), line)
	url := strings.Fields(line)[3]

	resp, err := http.Get(url + "?verdict=broken")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `data-run="a-test/20260101T000000.000Z" data-verdict="broken"`)

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("chaos serve did not stop within 10 s of its context ending")
	}
	_, err = http.Get(url)
	assert.Error(t, err, "nothing listens after the shutdown")
}

// The chaos binary serves until SIGINT or SIGTERM, then exits 0.
func TestServeStopsOnSignals(t *testing.T) {
	skipE2E(t)
	bin, err := chaosBinary()
	require.NoError(t, err)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, "serve", "--store", t.TempDir(), "--addr", "127.0.0.1:0")
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err, "the URL line")
		resp, err := http.Get(strings.Fields(line)[3])
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)

		require.NoError(t, cmd.Process.Signal(sig))
		assert.NoError(t, cmd.Wait(), "%v: exit 0", sig)
		assert.NoError(t, ctx.Err(), "%v: stopped before the deadline", sig)
		cancel()
	}
}
