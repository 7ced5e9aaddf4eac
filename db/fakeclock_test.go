package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/internal/fakeclock"
)

// goBuild builds the one-file Go program src with env and returns the
// binary's path.
func goBuild(t *testing.T, src string, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/prog\n\ngo 1.22\n"), 0o644))
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func TestClockReach(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	// A dynamically linked C program: dash, Debian's /bin/sh.
	sh, err := filepath.EvalSymlinks("/bin/sh")
	require.NoError(t, err)
	mech, err := ClockReach(sh)
	require.NoError(t, err)
	assert.Equal(t, fakeclock.Libfaketime, mech)

	// A static program (etcd's release builds are): no PT_INTERP.
	static := goBuild(t, "package main\nfunc main() {}\n", "CGO_ENABLED=0")
	_, err = ClockReach(static)
	assert.ErrorIs(t, err, ErrStaticProgram)
	assert.EqualError(t, err, static+": statically linked: libfaketime cannot reach its clock")

	// A dynamically linked Go program (Debian's etcd is one): it has an
	// interpreter, and still reads the clock without libc.
	dynamic := goBuild(t, "package main\n\n// #include <stdlib.h>\nimport \"C\"\n\nfunc main() { C.abs(1) }\n", "CGO_ENABLED=1")
	_, err = ClockReach(dynamic)
	assert.ErrorIs(t, err, ErrGoProgram)

	// chaos itself (this test binary is built from chaos's module).
	self, err := os.Executable()
	require.NoError(t, err)
	mech, err = ClockReach(self)
	require.NoError(t, err)
	assert.Equal(t, fakeclock.Native, mech)

	script := filepath.Join(t.TempDir(), "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec java -jar x.jar\n"), 0o755))
	_, err = ClockReach(script)
	assert.ErrorIs(t, err, ErrNotELF)
	_, err = ClockReach(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// HostClockReach finds a name on the host's PATH, resolves its symlinks,
// and names the host's file in its refusals.
func TestHostClockReach(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("/bin/sh", link))
	r := control.NewLocal("n1")
	ctx := context.Background()
	var seen ReachCache
	mech, err := HostClockReach(ctx, r, link, &seen)
	require.NoError(t, err)
	assert.Equal(t, fakeclock.Libfaketime, mech)
	_, err = HostClockReach(ctx, r, script, &seen)
	assert.ErrorIs(t, err, ErrNotELF)
	assert.True(t, strings.HasPrefix(err.Error(), script+": "), err.Error())
	_, err = HostClockReach(ctx, r, "no-such-program-chaos", &seen)
	assert.EqualError(t, err, "no-such-program-chaos: no such program on the host")
}

// The start prelude creates the control file, and re-anchors an existing
// one for a restarted libfaketime node: the new S, and an offset that
// keeps S + offset + rate*(t-S) where it was.
func TestFakeClockPrepare(t *testing.T) {
	file := filepath.Join(t.TempDir(), "faketimerc")
	run := func(mech string) fakeclock.File {
		t.Helper()
		out, err := exec.Command("sh", "-c", fakeClockPrepare(file, mech)).CombinedOutput()
		require.NoError(t, err, "%s", out)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		f, err := fakeclock.Parse(b)
		require.NoError(t, err, "%s", b)
		return f
	}
	f := run(fakeclock.Native)
	assert.Equal(t, fakeclock.Reset(), f, "chaos-node's: the true clock, no start")
	require.NoError(t, os.WriteFile(file, []byte("+2 x0.5\n"), 0o644))
	assert.Equal(t, fakeclock.File{Offset: 2 * time.Second, Rate: 0.5}, run(fakeclock.Native), "left alone")

	require.NoError(t, os.Remove(file))
	f = run(fakeclock.Libfaketime)
	assert.WithinDuration(t, time.Now(), f.Started, time.Minute)
	assert.True(t, f.IsReset())

	old := time.Now().Add(-10 * time.Second)
	prev := fakeclock.File{Started: old, Offset: time.Second, Rate: 0.5}
	require.NoError(t, os.WriteFile(file, append([]byte("# chaos\n"), prev.Format()...), 0o644))
	f = run(fakeclock.Libfaketime)
	assert.Equal(t, 0.5, f.Rate)
	want := prev.Offset + time.Duration(float64(old.Sub(f.Started))*(1-prev.Rate))
	assert.InDelta(t, float64(want), float64(f.Offset), float64(time.Microsecond))
}

// A daemon started under a fake clock gets the control file and the
// environment that names it.
func TestDaemonStartsUnderAFakeClock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	dir := t.TempDir()
	fc := &FakeClock{File: ClockFileIn(dir), Mechanism: fakeclock.Libfaketime, Lib: "/nonexistent/libfaketime.so.1"}
	d := Daemon{Dir: dir, Name: "d", Clock: fc}
	r := control.NewLocal("n1")
	ctx := context.Background()
	out := filepath.Join(dir, "env")
	// The library is missing: the loader warns and the program runs on.
	require.NoError(t, d.Start(ctx, r, []string{"sh", "-c", "env > " + out + "; exec sleep 30"}))
	t.Cleanup(func() { _ = d.Stop(context.Background(), r) })
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "FAKETIME_NO_CACHE=1")
	}, 5*time.Second, 10*time.Millisecond)
	env, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(env), "FAKETIME_TIMESTAMP_FILE="+fc.File+"\n")
	assert.Contains(t, string(env), "LD_PRELOAD="+fc.Lib+"\n")
	b, err := os.ReadFile(fc.File)
	require.NoError(t, err)
	assert.Contains(t, string(b), "# started ")
}

// etcd is a Go program: its members never run under libfaketime, and the
// refusal names the host's binary and why.
func TestEtcdFakeClockRefused(t *testing.T) {
	if _, err := exec.LookPath("etcd"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("etcd is missing; test.sh installs it (apt-get install -y etcd-server)")
		}
		t.Skip("needs etcd on PATH (apt-get install -y etcd-server)")
	}
	n := Node{Name: "n1", Addr: "127.0.0.1"}
	e := &Etcd{Layout: Layout{DataDir: t.TempDir()}, Nodes: []Node{n}}
	r := control.NewLocal("n1")
	_, err := e.FakeClock(context.Background(), r, n)
	assert.ErrorIs(t, err, ErrNoFakeClock)
	e.Faketime = true
	_, err = e.FakeClock(context.Background(), r, n)
	if !errors.Is(err, ErrGoProgram) && !errors.Is(err, ErrStaticProgram) {
		t.Fatalf("etcd under a fake clock: %v, want a Go or static program's refusal", err)
	}
	t.Log(err)
	assert.Nil(t, StartClock(context.Background(), true, e, r, n), "started as without a fake clock")
}

// Each start of a node under libfaketime leaves libfaketime's shared
// memory behind (its first process never removes it); the next start of
// the node removes that of its processes that are gone.
func TestLibfaketimeSharedMemoryCleanedAtRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	libs, _ := filepath.Glob("/usr/lib/*/faketime/libfaketime.so.1")
	if len(libs) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("libfaketime is missing; test.sh installs it (apt-get install -y faketime)")
		}
		t.Skip("needs libfaketime (apt-get install -y faketime)")
	}
	dir := t.TempDir()
	fc := &FakeClock{File: ClockFileIn(dir), Mechanism: fakeclock.Libfaketime, Lib: libs[0]}
	d := Daemon{Dir: dir, Name: "d", Clock: fc}
	r := control.NewLocal("n1")
	ctx := context.Background()
	require.NoError(t, d.Start(ctx, r, []string{"sleep", "30"}))
	p, err := d.Process(ctx, r)
	require.NoError(t, err)
	shm := fmt.Sprintf("/dev/shm/faketime_shm_%d", p.Pid)
	require.FileExists(t, shm, "libfaketime shares the node's start")
	require.NoError(t, d.Stop(ctx, r))
	assert.FileExists(t, shm, "left behind by the stopped node")
	require.NoError(t, d.Start(ctx, r, []string{"sleep", "30"}))
	t.Cleanup(func() { _ = d.Stop(context.Background(), r) })
	assert.NoFileExists(t, shm, "removed by the next start")
	assert.NoFileExists(t, fmt.Sprintf("/dev/shm/sem.faketime_sem_%d", p.Pid))
}
