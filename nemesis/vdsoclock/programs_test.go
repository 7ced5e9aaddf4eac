//go:build linux && amd64

package vdsoclock

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needProgram is program's path; without it the test is skipped, or
// fails in CI (CI=true), where test.sh installs the Debian package pkg.
func needProgram(t *testing.T, program, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing; test.sh installs it with apt-get install -y %s", program, pkg)
	}
	t.Skipf("%s is not installed (apt-get install -y %s)", program, pkg)
	return ""
}

// clockC reads its clocks through glibc, which calls the vDSO.
const clockC = `#include <stdio.h>
#include <time.h>
int main(void) {
	char line[64];
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin)) {
		struct timespec w, m;
		clock_gettime(CLOCK_REALTIME, &w);
		clock_gettime(CLOCK_MONOTONIC, &m);
		printf("%lld %lld\n", w.tv_sec * 1000000000LL + w.tv_nsec, m.tv_sec * 1000000000LL + m.tv_nsec);
	}
	return 0;
}
`

// clockJava reads its clocks as a JVM program does: Instant.now (the
// realtime clock) and System.nanoTime (the monotonic one).
const clockJava = `import java.io.*;
import java.time.Instant;
public class Clock {
	public static void main(String[] args) throws IOException {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		while (in.readLine() != null) {
			Instant now = Instant.now();
			long mono = System.nanoTime();
			System.out.println((now.getEpochSecond() * 1000000000L + now.getNano()) + " " + mono);
			System.out.flush();
		}
	}
}
`

// waitC is a 32-bit x86 program without libc: it waits for its stdin to
// close.
const waitC = `void _start(void) {
	char c;
	int n;
	do {
		__asm__ volatile("int $0x80" : "=a"(n) : "a"(3), "b"(0), "c"(&c), "d"(1) : "memory");
	} while (n > 0);
	__asm__ volatile("int $0x80" : : "a"(1), "b"(0));
}
`

// buildC compiles the C source src with gcc and the flags given.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	return compileC(t, needProgram(t, "gcc", "gcc"), src, flags...)
}

// compileC compiles the C source src with the compiler cc and the flags
// given.
func compileC(t *testing.T, cc, src string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "prog.c")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	bin := filepath.Join(dir, "prog")
	out, err := exec.Command(cc, append(flags, "-O2", "-o", bin, file)...).CombinedOutput()
	require.NoError(t, err, "%s: %s", cc, out)
	return bin
}

// checkSkewReaches patches c with an offset and a rate, checks what it
// reads, and heals it.
func checkSkewReaches(t *testing.T, c *clockChild) {
	t.Helper()
	pid := c.cmd.Process.Pid
	s := Skew{Realtime: -7 * time.Second, Monotonic: 2 * time.Second}
	_, err := Patch(pid, s)
	require.NoError(t, err)
	wall, mono := c.offsets(t)
	c.near(t, s.Realtime, wall, "realtime")
	c.near(t, s.Monotonic, mono, "monotonic")

	_, err = Set(pid, Skew{Realtime: s.Realtime, Monotonic: s.Monotonic, Rate: 2})
	require.NoError(t, err)
	_, m0 := c.read(t)
	t0 := time.Now()
	for time.Since(t0) < time.Second {
		c.read(t)
	}
	_, m1 := c.read(t)
	assert.InEpsilon(t, 2*float64(time.Since(t0)), float64(m1-m0), 0.05, "monotonic at 2x")

	_, err = Heal(pid)
	require.NoError(t, err)
	// Healed without a drain first (Heal alone, as `chaos vdso-clock
	// heal` never does), the monotonic clock is true again (it steps back by what
	// the rate and the offset added), and the realtime clock is exact.
	before := time.Now()
	w, _ := c.read(t)
	after := time.Now()
	assert.True(t, w >= before.UnixNano() && w <= after.UnixNano(), "realtime after heal: %d not in [%d, %d]", w, before.UnixNano(), after.UnixNano())
	assert.NoError(t, processRuns(pid))
}

func TestPatchReachesACProgram(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags []string
	}{{"dynamic", nil}, {"static", []string{"-static"}}} {
		t.Run(c.name, func(t *testing.T) {
			checkSkewReaches(t, startClockChild(t, exec.Command(buildC(t, clockC, c.flags...))))
		})
	}
}

// musl's clock_gettime calls the vDSO too (found by its symbol, as glibc
// does), dynamic or static; its gettimeofday goes through clock_gettime.
func TestPatchReachesAMuslProgram(t *testing.T) {
	musl := needProgram(t, "musl-gcc", "musl-tools")
	for _, c := range []struct {
		name  string
		flags []string
	}{{"dynamic", nil}, {"static", []string{"-static"}}} {
		t.Run(c.name, func(t *testing.T) {
			checkSkewReaches(t, startClockChild(t, exec.Command(compileC(t, musl, clockC, c.flags...))))
		})
	}
}

func TestPatchReachesAJVMProgram(t *testing.T) {
	java := needProgram(t, "java", "default-jdk-headless")
	src := filepath.Join(t.TempDir(), "Clock.java")
	require.NoError(t, os.WriteFile(src, []byte(clockJava), 0o644))
	checkSkewReaches(t, startClockChild(t, exec.Command(java, src)))
}

func TestPatchRefusesA32BitProgram(t *testing.T) {
	cmd := exec.Command(buildC(t, waitC, "-m32", "-nostdlib", "-static"))
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	_, err = Patch(cmd.Process.Pid, Skew{Realtime: time.Second})
	assert.ErrorContains(t, err, "only x86-64 programs are patched")
}

// waitJava counts timed waits: a thread waits 20 ms on a monitor (the JVM
// computes its deadline from its monotonic clock, then waits for it on
// the kernel's), again and again; each line on stdin gets the count.
const waitJava = `import java.io.*;
public class Waits {
	static volatile long count;
	public static void main(String[] args) throws Exception {
		Object lock = new Object();
		Thread t = new Thread(() -> {
			while (true) {
				synchronized (lock) {
					try { lock.wait(20); } catch (InterruptedException e) { return; }
				}
				count++;
			}
		});
		t.setDaemon(true);
		t.start();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		while (in.readLine() != null) {
			System.out.println(count + " 0");
			System.out.flush();
		}
	}
}
`

// A JVM waits for a deadline it computed from its monotonic clock on the
// kernel's clock: a clock moved J ahead makes each timed wait J longer
// (they go on, one each J), the heal puts them back on pace, and a clock
// running fast gains no more than its lead, so its waits stretch no more.
func TestAJVMsTimedWaitsStretchByTheLeadAndNoMore(t *testing.T) {
	java := needProgram(t, "java", "default-jdk-headless")
	src := filepath.Join(t.TempDir(), "Waits.java")
	require.NoError(t, os.WriteFile(src, []byte(waitJava), 0o644))
	c := startClockChild(t, exec.Command(java, src))
	pid := c.cmd.Process.Pid
	count := func() int64 { n, _ := c.read(t); return n }
	// waits is how many waits end within d.
	waits := func(d time.Duration) int64 {
		first := count()
		time.Sleep(d)
		return count() - first
	}
	require.Greater(t, waits(time.Second), int64(20), "20 ms waits, before the patch")

	const jump = time.Second
	_, err := Patch(pid, Skew{Monotonic: jump})
	require.NoError(t, err)
	n := waits(3 * jump)
	assert.True(t, n >= 1 && n <= 4, "%d waits in 3 s with the clock 1 s ahead: want about one a second", n)

	_, err = Heal(pid)
	require.NoError(t, err)
	time.Sleep(jump) // the last stretched wait ends
	assert.Greater(t, waits(time.Second), int64(20), "back on pace after the heal")

	// Twice as fast for 3 s, at most 200 ms ahead: the waits stretch by
	// 200 ms, not by the 3 s the clock would have gained.
	_, err = Patch(pid, Skew{Rate: 2, MaxLead: 200 * time.Millisecond})
	require.NoError(t, err)
	time.Sleep(3 * time.Second)
	n = waits(2 * time.Second)
	assert.True(t, n >= 5, "%d waits in 2 s with the clock at most 200 ms ahead: want about one each 220 ms", n)
	_, err = Heal(pid)
	require.NoError(t, err)
	assert.NoError(t, processRuns(pid))
}
