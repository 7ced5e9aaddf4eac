package control

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The Remote contract, one suite run against every implementation: local,
// SSH (a real sshd) and Docker (a real container). Everything on the host's
// side is looked at through the Remote itself (Run, Download), so that the
// suite holds where the host's files are not this machine's.

// remoteKind makes Remotes of one implementation for the contract suite.
type remoteKind struct {
	// open returns a Remote (closed when the test ends) and a directory on
	// its host where the test may write.
	open func(t *testing.T) (Remote, string)
	// root says whether commands run as uid 0.
	root bool
}

func TestLocalContract(t *testing.T) {
	runContract(t, remoteKind{open: func(t *testing.T) (Remote, string) {
		return NewLocal("n1"), t.TempDir()
	}, root: os.Geteuid() == 0})
}

func TestSSHContract(t *testing.T) {
	runContract(t, remoteKind{open: func(t *testing.T) (Remote, string) {
		srv := startSSHD(t)
		return dial(t, srv.addr, srv.config(t, srv.addr)), t.TempDir()
	}, root: true})
}

func TestDockerExecContract(t *testing.T) {
	runContract(t, remoteKind{open: func(t *testing.T) (Remote, string) {
		r := dialContainer(t, startContainer(t), DockerExec)
		return r, mkdirIn(t, r)
	}, root: true})
}

func TestDockerNsenterContract(t *testing.T) {
	runContract(t, remoteKind{open: func(t *testing.T) (Remote, string) {
		r := dialContainer(t, startContainer(t), DockerNsenter)
		return r, mkdirIn(t, r)
	}, root: true})
}

// runContract runs the contract's tests on remotes of kind k.
func runContract(t *testing.T, k remoteKind) {
	t.Run("RunReportsExitAndOutput", func(t *testing.T) { contractRun(t, k) })
	t.Run("CancelKillsTheProcessGroup", func(t *testing.T) { contractCancel(t, k) })
	t.Run("UploadDownloadRoundTrip", func(t *testing.T) { contractRoundTrip(t, k) })
	t.Run("TransferErrorsAreOneLine", func(t *testing.T) { contractTransferErrors(t, k) })
	t.Run("UploadStopsWhenContextEnds", func(t *testing.T) { contractUploadCancelled(t, k) })
	t.Run("ConcurrentCommands", func(t *testing.T) { contractConcurrent(t, k) })
}

func contractRun(t *testing.T, k remoteKind) {
	r, _ := k.open(t)
	shown := func(res Result) string { return fmt.Sprintf("%d %q %q", res.ExitCode, res.Stdout, res.Stderr) }
	require.Equal(t, `0 "out\n" "err\n"`, shown(run(t, r, "echo out; echo err >&2")))
	require.Equal(t, `3 "partial\n" "why\n"`, shown(run(t, r, "echo partial; echo why >&2; exit 3")),
		"a non-zero exit is no error of Run")
	require.Equal(t, `4 "" "no newline"`, shown(run(t, r, "printf 'no newline' >&2; exit 4")))

	res := run(t, r, "kill -TERM $$")
	require.Equal(t, 143, res.ExitCode, "128+SIGTERM, as a shell reports it")

	word := `it's "$HOME" and a \ back`
	require.Equal(t, word, string(run(t, r, "printf '%s' "+ShellQuote(word)).Stdout))

	if k.root {
		require.Equal(t, "0\n", string(run(t, r, "id -u").Stdout), "commands run as root")
	}
}

// liveWith counts the host's processes whose command line holds marker.
// The pattern's brackets keep the grep itself from matching.
func liveWith(t *testing.T, r Remote, marker string) int {
	pattern := "[" + marker[:1] + "]" + marker[1:]
	out := run(t, r, "grep -l "+ShellQuote(pattern)+" /proc/[0-9]*/cmdline 2>/dev/null | wc -l").Stdout
	var n int
	_, err := fmt.Sscan(string(out), &n)
	require.NoError(t, err, "%q", out)
	return n
}

func contractCancel(t *testing.T, k remoteKind) {
	r, _ := k.open(t)
	const marker = "876.54321"
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Run(ctx, "sleep "+marker+" & sleep "+marker+"; wait")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, strings.HasPrefix(err.Error(), r.Host()+": `sleep "+marker), err.Error())
	require.Less(t, time.Since(start), 10*time.Second)
	require.Eventually(t, func() bool { return liveWith(t, r, marker) == 0 },
		10*time.Second, 50*time.Millisecond, "the shell and both sleeps are killed")
}

func contractRoundTrip(t *testing.T, k remoteKind) {
	r, dir := k.open(t)
	local := t.TempDir()
	src, data := randomFile(t, local, 8<<20)
	ctx := context.Background()

	dst := dir + "/uploaded"
	run(t, r, "echo old > "+ShellQuote(dst))
	require.NoError(t, r.Upload(ctx, src, dst, 0o750))
	require.Equal(t, "750\n", string(run(t, r, "stat -c %a "+ShellQuote(dst)).Stdout))
	require.Equal(t, "uploaded\n", string(run(t, r, "ls -A "+ShellQuote(dir)).Stdout),
		"no temporary file is left")

	back := filepath.Join(local, "back")
	require.NoError(t, r.Download(ctx, dst, back))
	got, err := os.ReadFile(back)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "downloaded content")
	info, err := os.Stat(back)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	requireNoTemp(t, back)
}

func contractTransferErrors(t *testing.T, k remoteKind) {
	r, dir := k.open(t)
	local := t.TempDir()
	src := writeFile(t, local, "src", "data")
	ctx := context.Background()
	oneLine := func(err error, prefix string) {
		t.Helper()
		require.Error(t, err)
		require.True(t, strings.HasPrefix(err.Error(), prefix), "%q lacks the prefix %q", err, prefix)
		require.NotContains(t, err.Error(), "\n")
	}

	dst := dir + "/no/such/dir/f"
	oneLine(r.Upload(ctx, src, dst, 0o644), r.Host()+": upload "+src+" to "+dst+": ")
	missing := filepath.Join(local, "missing")
	oneLine(r.Upload(ctx, missing, dir+"/x", 0o644), r.Host()+": upload")
	back := filepath.Join(local, "back")
	oneLine(r.Download(ctx, dir+"/missing", back), r.Host()+": download")
	require.NoFileExists(t, back)
	requireNoTemp(t, back)
	require.Empty(t, string(run(t, r, "ls -A "+ShellQuote(dir)).Stdout), "no temporary file is left")
}

func contractUploadCancelled(t *testing.T, k remoteKind) {
	r, dir := k.open(t)
	src, _ := randomFile(t, t.TempDir(), 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := r.Upload(ctx, src, dir+"/f", 0o644)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, string(run(t, r, "ls -A "+ShellQuote(dir)).Stdout), "neither the file nor a temporary one")
}

func contractConcurrent(t *testing.T, k remoteKind) {
	r, _ := k.open(t)
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := r.Run(ctx, fmt.Sprintf("echo %d; exit %d", i, i))
			if err == nil && res.ExitCode == i {
				outs[i] = string(res.Stdout)
			}
		})
	}
	wg.Wait()
	for i, out := range outs {
		require.Equal(t, fmt.Sprintf("%d\n", i), out, "command %d", i)
	}
}
