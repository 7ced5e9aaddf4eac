//go:build linux && amd64

package vdsoclock

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary a child that reads its clocks: for each
// line on stdin it prints time.Now's wall clock and the monotonic time
// since it started, in nanoseconds, both read through the vDSO by Go's
// runtime.
const childEnv = "VDSOCLOCK_TEST_CHILD"

// execEnv makes the test binary a child that execs itself again and
// again, a millisecond apart, until killed.
const execEnv = "VDSOCLOCK_TEST_EXEC"

func TestMain(m *testing.M) {
	if os.Getenv(execEnv) == "1" {
		time.Sleep(time.Millisecond)
		_ = syscall.Exec(os.Args[0], os.Args, os.Environ())
		os.Exit(1)
	}
	if os.Getenv(childEnv) == "1" {
		start := time.Now()
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			now := time.Now()
			fmt.Printf("%d %d\n", now.UnixNano(), now.Sub(start).Nanoseconds())
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// clockChild is a program that reads its clocks: for each line on its
// stdin it prints its realtime clock and a monotonic clock (of any
// origin), in nanoseconds.
type clockChild struct {
	cmd *exec.Cmd
	in  io.Writer
	out *bufio.Scanner
	// since is a monotonic time the child said, began this process's
	// reading at that moment (the middle of the round trip), and
	// calibration that round trip.
	began       time.Time
	since       int64
	calibration time.Duration
	// slack is how far off the last offsets may be: half the round trips
	// of their read and of the calibration.
	slack time.Duration
}

// startGoChild starts the test binary as TestMain's child.
func startGoChild(t *testing.T) *clockChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return startClockChild(t, cmd)
}

// startClockChild starts cmd and waits until it answers.
func startClockChild(t *testing.T, cmd *exec.Cmd) *clockChild {
	t.Helper()
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := &clockChild{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	c.read(t) // the child is up
	s := c.best(t)
	c.since, c.began, c.calibration = s.mono, s.mid, s.rtt
	return c
}

// sample is one read of the child's clocks, timed: the child read them
// between mid-rtt/2 and mid+rtt/2 of this process's clock.
type sample struct {
	wall, mono int64
	mid        time.Time
	rtt        time.Duration
}

// best is the read with the shortest round trip of a few: the one whose
// moment is known best (on a loaded machine one read in several waits
// for a CPU for milliseconds).
func (c *clockChild) best(t *testing.T) sample {
	t.Helper()
	var b sample
	for i := range 9 {
		before := time.Now()
		w, m := c.read(t)
		rtt := time.Since(before)
		if i == 0 || rtt < b.rtt {
			b = sample{wall: w, mono: m, mid: before.Add(rtt / 2), rtt: rtt}
		}
	}
	return b
}

// read asks the child for its clocks.
func (c *clockChild) read(t *testing.T) (wall, mono int64) {
	t.Helper()
	_, err := io.WriteString(c.in, "\n")
	require.NoError(t, err)
	require.True(t, c.out.Scan(), "the child said nothing: %v", c.out.Err())
	_, err = fmt.Sscan(strings.TrimSpace(c.out.Text()), &wall, &mono)
	require.NoError(t, err)
	return wall, mono
}

// offsets are how far the child's clocks are from this process's: its
// wall clock, and its monotonic time since it began against this
// process's, each within c.slack (tens of microseconds when quiet).
func (c *clockChild) offsets(t *testing.T) (wall, mono time.Duration) {
	s := c.best(t)
	c.slack = (s.rtt + c.calibration) / 2
	return time.Duration(s.wall - s.mid.UnixNano()), time.Duration(s.mono-c.since) - s.mid.Sub(c.began)
}

// near checks that an offset the last offsets gave is want within 1 ms,
// beyond what the measurement cannot tell (c.slack).
func (c *clockChild) near(t *testing.T, want, got time.Duration, msg string) {
	t.Helper()
	assert.InDelta(t, float64(want), float64(got), float64(time.Millisecond+c.slack), "%s (measured within %v)", msg, c.slack)
}

func TestPatchMovesAGoProgramsClocksAndHealPutsThemBack(t *testing.T) {
	c := startGoChild(t)
	pid := c.cmd.Process.Pid
	wall, mono := c.offsets(t)
	c.near(t, 0, wall, "before the patch")
	c.near(t, 0, mono, "before the patch")

	s := Skew{Realtime: 5 * time.Second, Monotonic: 3 * time.Second}
	p, err := Patch(pid, s)
	require.NoError(t, err)
	assert.Contains(t, p.Funcs, "__vdso_clock_gettime")
	assert.Contains(t, p.Direct, "__vdso_clock_gettime", "called through its moved start on this kernel")
	wall, mono = c.offsets(t)
	c.near(t, s.Realtime, wall, "realtime")
	c.near(t, s.Monotonic, mono, "monotonic")

	found, err := Inspect(pid)
	require.NoError(t, err)
	require.NotNil(t, found)
	assert.Equal(t, p.Code, found.Code)
	rt, mo := found.Offsets()
	assert.Equal(t, s.Realtime, rt)
	assert.Equal(t, s.Monotonic, mo)

	// The fault changes in place: the data page alone is rewritten.
	s = Skew{Realtime: -2 * time.Hour, Monotonic: 4 * time.Second}
	_, err = Patch(pid, s)
	require.NoError(t, err)
	wall, mono = c.offsets(t)
	c.near(t, s.Realtime, wall, "realtime, rewritten")
	c.near(t, s.Monotonic, mono, "monotonic, rewritten")

	_, err = Set(pid, Skew{Monotonic: time.Second})
	assert.ErrorContains(t, err, "would move them back")

	healed, err := Heal(pid)
	require.NoError(t, err)
	require.NotNil(t, healed)
	after, err := Inspect(pid)
	require.NoError(t, err)
	assert.Nil(t, after, "the vDSO's own words are back")
	wall, mono = c.offsets(t)
	c.near(t, 0, wall, "after heal")
	c.near(t, 0, mono, "after heal")
	assert.NoError(t, processRuns(pid), "no thread is left stopped")
}

func TestPatchRunsAGoProgramsClockAtTheRate(t *testing.T) {
	c := startGoChild(t)
	pid := c.cmd.Process.Pid
	_, err := Patch(pid, Skew{Rate: 2})
	require.NoError(t, err)
	w0, m0 := c.read(t)
	t0 := time.Now()
	// A second of true time, polled: the child's clock must move twice as far.
	for time.Since(t0) < time.Second {
		c.read(t)
	}
	w1, m1 := c.read(t)
	elapsed := time.Since(t0)
	assert.InEpsilon(t, 2*float64(elapsed), float64(m1-m0), 0.05, "monotonic at 2x")
	assert.InEpsilon(t, 2*float64(elapsed), float64(w1-w0), 0.05, "realtime at 2x")
	_, err = Heal(pid)
	require.NoError(t, err)
}

func TestHealLeavesAnUnpatchedProcessAlone(t *testing.T) {
	c := startGoChild(t)
	p, err := Heal(c.cmd.Process.Pid)
	assert.NoError(t, err)
	assert.Nil(t, p)
}

func TestPatchRefusesABadRate(t *testing.T) {
	_, err := Patch(os.Getpid(), Skew{Rate: -1})
	assert.ErrorContains(t, err, "clock rate -1")
}

func TestPatchSaysWhenTheProcessIsGone(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	_, err := Patch(cmd.Process.Pid, Skew{Realtime: time.Second})
	assert.ErrorIs(t, err, errExited)
}

// allStopped reports whether every thread of pid is stopped by a signal,
// as the pause family leaves a node (state T).
func allStopped(pid int) bool {
	tids, err := threadsOf(pid)
	if err != nil {
		return false
	}
	for _, tid := range tids {
		if !signalStopped(tid) {
			return false
		}
	}
	return len(tids) > 0
}

// processRuns reports an error when a thread of pid is stopped (state T
// or t in /proc/PID/task/TID/stat).
func processRuns(pid int) error {
	tids, err := threadsOf(pid)
	if err != nil {
		return err
	}
	for _, tid := range tids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if err != nil {
			return err
		}
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if fields[0] == "T" || fields[0] == "t" {
			return fmt.Errorf("thread %d of %d is stopped (%s)", tid, pid, fields[0])
		}
	}
	return nil
}

// A process the pause family stopped (SIGSTOP) is patched and healed
// without being resumed: it stays stopped, and reads the skew once it
// goes on.
func TestPatchLeavesAStoppedProcessStopped(t *testing.T) {
	c := startGoChild(t)
	pid := c.cmd.Process.Pid
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGSTOP))
	require.Eventually(t, func() bool { return allStopped(pid) }, 5*time.Second, 5*time.Millisecond)

	s := Skew{Realtime: 3 * time.Second}
	_, err := Patch(pid, s)
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return allStopped(pid) }, 5*time.Second, time.Millisecond, "stopped after the patch")

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGCONT))
	wall, _ := c.offsets(t)
	c.near(t, s.Realtime, wall, "")

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGSTOP))
	require.Eventually(t, func() bool { return allStopped(pid) }, 5*time.Second, 5*time.Millisecond)
	_, err = Heal(pid)
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return allStopped(pid) }, 5*time.Second, time.Millisecond, "stopped after the heal")
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGCONT))
	wall, _ = c.offsets(t)
	c.near(t, 0, wall, "")
}

// signalStopped reports whether pid is stopped by a signal (state T in
// /proc/PID/stat).
func signalStopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "T"
}

// A process that execs while it is patched (its threads go, its vDSO is
// mapped anew) gets a patch, or a clean error: never a stopped thread, a
// panic or a hang.
func TestPatchAProcessThatKeepsExecing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), execEnv+"=1")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	patched, failed := 0, 0
	for range 30 {
		if _, err := Patch(pid, Skew{Realtime: time.Second}); err != nil {
			assert.NotContains(t, err.Error(), "EOF", "a clear reason, not the read's")
			failed++
			t.Logf("refused: %v", err)
		} else {
			patched++
		}
		require.Eventually(t, func() bool { return processRuns(pid) == nil }, 5*time.Second, time.Millisecond, "no thread left stopped")
	}
	t.Logf("%d patched, %d refused", patched, failed)
}
