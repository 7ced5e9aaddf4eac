package hostcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/internal/fakeclock"
)

// FakeClockReadCmd reads the clock to the nanosecond with GNU date, to the
// microsecond with busybox's (no %N) and adjtimex, to the second without
// adjtimex; then the control file, where it exists. Each answer parses.
func TestFakeClockReadCmdWithoutNanoseconds(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	script := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	file := filepath.Join(dir, "n1.rc")
	require.NoError(t, os.WriteFile(file, []byte("+0 x1\n"), 0o644))
	run := func() string {
		c := exec.Command("/bin/sh", "-c", FakeClockReadCmd(file))
		c.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
		stamp, rest, _ := strings.Cut(string(out), "\n")
		require.Equal(t, "+0 x1\n", rest)
		_, err = fakeclock.ParseUnix(stamp)
		require.NoError(t, err, stamp)
		return stamp
	}
	script("date", `case "$1" in +%s.%N) echo 1700000000.123456789;; +%s) echo 1700000000;; esac`)
	require.Equal(t, "1700000000.123456789", run(), "GNU date")
	script("date", `case "$1" in +%s.%N) echo 1700000000.%N;; +%s) echo 1700000000;; esac`)
	script("adjtimex", `printf '    time.tv_sec:  1700000001\n    time.tv_usec: 4567\n    return value: 5 (clock not synchronized)\n'`)
	require.Equal(t, "1700000001.004567", run(), "busybox date and adjtimex")
	script("adjtimex", `exit 1`)
	require.Equal(t, "1700000000.0", run(), "busybox date alone")
}
