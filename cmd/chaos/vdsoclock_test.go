package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/nemesis/vdsoclock"
)

// startRecorded starts a process (sleep) and writes its start record as
// a node's daemon does ("PID STARTTIME"), and returns both.
func startRecorded(t *testing.T) (pid int, record string) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	require.NoError(t, err)
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	record = filepath.Join(t.TempDir(), "n1.started")
	require.NoError(t, os.WriteFile(record, []byte(fmt.Sprintf("%d %s\n", cmd.Process.Pid, fields[19])), 0o644))
	return cmd.Process.Pid, record
}

// vdsoLine parses the first line vdso-clock printed.
func vdsoLine(t *testing.T, out string) vdsoclock.Line {
	t.Helper()
	var l vdsoclock.Line
	first, _, _ := strings.Cut(out, "\n")
	require.NoError(t, json.Unmarshal([]byte(first), &l), "output %q", out)
	return l
}

func TestVDSOClockSetShowHeal(t *testing.T) {
	pid, record := startRecorded(t)
	args := []string{"--pid", fmt.Sprint(pid), "--started", record}

	code, out, errOut := execute(t, append([]string{"vdso-clock", "set", "--realtime", "-1500ms", "--monotonic", "500ms"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	l := vdsoLine(t, out)
	assert.True(t, l.Patched)
	assert.Equal(t, pid, l.Pid)
	assert.Contains(t, l.Funcs, "__vdso_clock_gettime")
	assert.InDelta(t, float64(-1500*time.Millisecond), float64(l.RealtimeNS), float64(time.Millisecond))
	assert.InDelta(t, float64(500*time.Millisecond), float64(l.MonotonicNS), float64(time.Millisecond))

	code, out, errOut = execute(t, append([]string{"vdso-clock", "show"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, vdsoLine(t, out).Patched)

	// The heal first drains the monotonic clocks' 500 ms lead at half
	// speed, so that they never read back: it takes a second at least.
	began := time.Now()
	code, out, errOut = execute(t, append([]string{"vdso-clock", "heal"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.GreaterOrEqual(t, time.Since(began), 990*time.Millisecond, "the heal waited for the drain")
	assert.False(t, vdsoLine(t, out).Patched)
	code, out, _ = execute(t, append([]string{"vdso-clock", "show"}, args...)...)
	require.Equal(t, exitOK, code)
	l = vdsoLine(t, out)
	assert.False(t, l.Patched)
	assert.Empty(t, l.Code, "the vDSO is the kernel's own again")
}

func TestVDSOClockRefusesBadInput(t *testing.T) {
	pid, record := startRecorded(t)
	other := filepath.Join(t.TempDir(), "other.started")
	require.NoError(t, os.WriteFile(other, []byte(fmt.Sprintf("%d 1\n", pid)), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"set", "--pid", fmt.Sprint(pid)}, "--pid (above 1) and --started (the node's start record) are required"},
		{[]string{"set", "--pid", "1", "--started", record}, "--pid (above 1)"},
		{[]string{"set", "--pid", fmt.Sprint(pid + 1), "--started", record}, "is not the one"},
		{[]string{"set", "--pid", fmt.Sprint(pid), "--started", other}, "another process reused its pid; refused"},
		{[]string{"set", "--pid", fmt.Sprint(pid), "--started", record, "--rate", "0"}, "want a rate above 0"},
	} {
		code, _, errOut := execute(t, append([]string{"vdso-clock"}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
		assert.NotContains(t, errOut, "\n", "one line: %v", c.args)
	}
}

// Without CAP_SYS_PTRACE (dropped with setpriv), root cannot trace
// another root process: the command says what it needs, exit 255.
func TestVDSOClockSaysItNeedsPtrace(t *testing.T) {
	skipE2E(t)
	if os.Geteuid() != 0 {
		t.Skip("dropping CAP_SYS_PTRACE to test the refusal needs root")
	}
	needProgram(t, "setpriv", "util-linux")
	pid, record := startRecorded(t)
	bin, err := chaosBinary()
	require.NoError(t, err)
	out, err := exec.Command("setpriv", "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace",
		bin, "vdso-clock", "set", "--pid", fmt.Sprint(pid), "--started", record, "--realtime", "1s").CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, exitSetup, ee.ExitCode())
	assert.Contains(t, string(out), "tracing another process needs root with CAP_SYS_PTRACE")
}
