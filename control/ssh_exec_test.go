package control

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// feed writes each chunk to a new pgidWriter, then flushes it.
func feed(t *testing.T, chunks ...string) (pgid int64, passed string) {
	var out bytes.Buffer
	p := newPGIDWriter(&out)
	for _, c := range chunks {
		n, err := p.Write([]byte(c))
		require.NoError(t, err)
		require.Equal(t, len(c), n)
	}
	p.flush()
	return p.pgid.Load(), out.String()
}

func TestPGIDWriterTakesOutTheMarkerLine(t *testing.T) {
	pgid, passed := feed(t, "chaos-pgid=123\nerr\n")
	require.Equal(t, int64(123), pgid)
	require.Equal(t, "err\n", passed)

	pgid, passed = feed(t, "chaos-pg", "id=42\nab", "c\n", "more")
	require.Equal(t, int64(42), pgid)
	require.Equal(t, "abc\nmore", passed)

	pgid, passed = feed(t, "Could not chdir to home directory /x\nchaos-pgid=7\nboom\n")
	require.Equal(t, int64(7), pgid)
	require.Equal(t, "Could not chdir to home directory /x\nboom\n", passed, "lines before it are kept")
}

func TestPGIDWriterAwait(t *testing.T) {
	p := newPGIDWriter(io.Discard)
	require.Zero(t, p.await(time.Millisecond), "unknown yet")
	_, err := p.Write([]byte("chaos-pgid=99\n"))
	require.NoError(t, err)
	require.Equal(t, int64(99), p.await(time.Hour), "known: no wait")
}

func TestPGIDWriterWithoutMarker(t *testing.T) {
	pgid, passed := feed(t, "sh: 1: exec: sh: not found")
	require.Zero(t, pgid)
	require.Equal(t, "sh: 1: exec: sh: not found", passed, "held back, then flushed")

	long := strings.Repeat("x", 5000)
	pgid, passed = feed(t, long, "\nchaos-pgid=1\n")
	require.Zero(t, pgid, "it stops looking after 4 KiB")
	require.Equal(t, long+"\nchaos-pgid=1\n", passed)

	pgid, passed = feed(t, "chaos-pgid=abc\nerr\n")
	require.Zero(t, pgid)
	require.Equal(t, "err\n", passed)
}

// TestReportingGroupReportsTheLeadersPID: run as sshd runs a command (the
// shell as a process group leader), the line reports that group and then
// behaves as the command.
func TestReportingGroupReportsTheLeadersPID(t *testing.T) {
	var stdout, stderr bytes.Buffer
	p := newPGIDWriter(&stderr)
	cmd := exec.Command("sh", "-c", reportingGroup(wrapCommand(asRoot, "echo out; echo err >&2; exit 3")))
	cmd.Stdout, cmd.Stderr = &stdout, p
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 3, exit.ExitCode())
	require.Equal(t, int64(cmd.Process.Pid), p.pgid.Load())
	require.Equal(t, "out\n", stdout.String())
	require.Equal(t, "err\n", stderr.String())
}

func TestUploadScript(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "my dir", "it's")
	require.NoError(t, os.Mkdir(filepath.Dir(dst), 0o755))
	upload := func(data string, size int64) (string, error) {
		cmd := exec.Command("sh", "-c", uploadScript(dst, size, 0o751))
		cmd.Stdin = strings.NewReader(data)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := upload("hello", 5)
	require.NoError(t, err, out)
	got, err := os.ReadFile(dst)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
	info, err := os.Stat(dst)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o751), info.Mode().Perm())

	out, err = upload("hel", 5)
	require.Error(t, err, "a short upload fails")
	require.Equal(t, "received 3 of 5 bytes\n", out)
	got, err = os.ReadFile(dst)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got), "and leaves the old file")
	require.NoFileExists(t, dst+".tmp")
}

func TestCappedBufferKeepsTheStart(t *testing.T) {
	c := &cappedBuffer{max: 5}
	for _, s := range []string{"abc", "def", "ghi"} {
		n, err := c.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, 3, n, "writes always succeed, so the command is never stalled")
	}
	require.Equal(t, "abcde", c.buf.String())
}

// A reported group of 1 or less (kill -KILL -1 would kill every process)
// is never taken: the cancelled command's kill then refuses to run.
func TestPGIDWriterRefusesGroupsAtMostOne(t *testing.T) {
	for _, id := range []string{"1", "0", "-1", "-5"} {
		pgid, passed := feed(t, "chaos-pgid="+id+"\nerr\n")
		require.Zero(t, pgid, id)
		require.Equal(t, "err\n", passed, id)
	}
}
