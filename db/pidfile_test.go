package db

import (
	"context"
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
)

// bystander starts a process of the test's own that no daemon started: a
// pid a planted or stale pidfile could name. It is killed at the end.
func bystander(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// procState is the state letter of process pid ("S", "T", "Z"), "" when
// it is gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	state, _, _ := strings.Cut(rest, " ")
	return state
}

func requireUnsignalled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	require.Equal(t, "S", procState(cmd.Process.Pid), "the bystander sleeps on, neither killed nor stopped")
}

// A pidfile that does not hold a pid above 1 ("1" would make a group
// signal kill -SIG -1, every process) is refused by every command that
// signals and by Process (a run's setup asks it), with one line naming it; nothing is signalled and the pidfile
// is left for a person to look at. The signal sent is CONT, harmless to
// every process, should the refusal ever fail.
func TestPidfileWithoutAPidIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs shell commands")
	}
	ctx := context.Background()
	r := control.NewLocal("n1")
	for _, content := range []string{"1", "1\n", "0", "-1", "abc", "", "01", "12345678901", "2 3", "$(touch pwned)"} {
		t.Run(fmt.Sprintf("%q", content), func(t *testing.T) {
			for _, group := range []bool{false, true} {
				d := daemon{dir: t.TempDir(), name: "d", group: group}
				require.NoError(t, os.WriteFile(d.pidfile(), []byte(content), 0o644))
				want := "pidfile " + d.pidfile() + " does not hold a process id above 1: refused, nothing signalled; remove it if no process of this node runs"
				require.EqualError(t, d.signal(ctx, r, "CONT"), want)
				require.EqualError(t, d.stop(ctx, r, 0), want)
				_, err := d.process(ctx, r)
				require.EqualError(t, err, want)
				require.FileExists(t, d.pidfile(), "a refused pidfile is left")
				require.NoFileExists(t, filepath.Join(d.dir, "pwned"))
			}
		})
	}
}

// A pidfile naming a live process chaos did not start (no record, or a
// record of another process at that pid: the pid was reused) is not
// signalled by any command: to chaos the daemon does not run, so a signal
// does nothing, a stop removes the stale pidfile, and a start starts it.
func TestPidfileOfAnUnrelatedProcessIsNeverSignalled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs shell commands")
	}
	ctx := context.Background()
	r := control.NewLocal("n1")
	other := bystander(t)
	pid := fmt.Sprint(other.Process.Pid)
	records := map[string]string{"no record": "", "a record of an earlier process at that pid": pid + " 1"}
	for name, record := range records {
		t.Run(name, func(t *testing.T) {
			for _, group := range []bool{false, true} {
				d := daemon{dir: t.TempDir(), name: "d", group: group}
				plant := func() {
					require.NoError(t, os.WriteFile(d.pidfile(), []byte(pid+"\n"), 0o644))
					if record != "" {
						require.NoError(t, os.WriteFile(d.record(), []byte(record+"\n"), 0o644))
					}
				}
				plant()
				p, err := d.process(ctx, r)
				require.NoError(t, err)
				require.Equal(t, Process{}, p, "no process of chaos's runs")
				require.NoError(t, d.signal(ctx, r, "STOP"))
				require.NoError(t, d.kill9(ctx, r))
				requireUnsignalled(t, other)
				require.NoError(t, d.stop(ctx, r, 0))
				requireUnsignalled(t, other)
				require.NoFileExists(t, d.pidfile(), "a stale pidfile is removed")

				plant()
				require.NoError(t, d.start(ctx, r, []string{"sleep", "30"}), "the daemon does not run: it starts")
				require.NoError(t, d.stop(ctx, r, 0))
				requireUnsignalled(t, other)
			}
		})
	}
}

// The daemon chaos started is signalled, and its record names it: pid and
// start time; a stop removes both files.
func TestDaemonRecordsTheProcessItStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	ctx := context.Background()
	r := control.NewLocal("n1")
	d := daemon{dir: t.TempDir(), name: "d"}
	require.NoError(t, d.start(ctx, r, []string{"sleep", "30"}))
	t.Cleanup(func() { _ = d.stop(context.Background(), r, 0) })
	pidText, err := os.ReadFile(d.pidfile())
	require.NoError(t, err)
	var pid int
	_, err = fmt.Sscan(string(pidText), &pid)
	require.NoError(t, err)
	rec, err := os.ReadFile(d.record())
	require.NoError(t, err)
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	_, rest, _ := strings.Cut(string(stat), ") ")
	require.Equal(t, fmt.Sprintf("%d %s\n", pid, strings.Fields(rest)[19]), string(rec))

	require.NoError(t, d.signal(ctx, r, "STOP"))
	require.Eventually(t, func() bool { return procState(pid) == "T" }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, d.signal(ctx, r, "CONT"))
	err = d.start(ctx, r, []string{"sleep", "30"})
	require.ErrorContains(t, err, fmt.Sprintf("already running as pid %d", pid))
	require.ErrorIs(t, err, ErrAlreadyRunning)
	require.NoError(t, d.stop(ctx, r, 1))
	assert.NoFileExists(t, d.pidfile())
	assert.NoFileExists(t, d.record())
	assert.NotContains(t, []string{"S", "T", "R"}, procState(pid), "stopped")
}

// A system that writes its own pidfile: start records the process the
// pidfile names once it lives, and the commands act on it.
func TestDaemonRecordsTheSystemsOwnPidfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	ctx := context.Background()
	r := control.NewLocal("n1")
	dir := t.TempDir()
	own := filepath.Join(dir, "own.pid")
	d := daemon{dir: dir, name: "d", ownPidfile: own, group: true}
	require.NoError(t, d.start(ctx, r, []string{"sh", "-c", "sleep 30 & echo $! > " + own + "; wait"}))
	t.Cleanup(func() { _ = d.stop(context.Background(), r, 0) })
	require.FileExists(t, d.record())
	require.NoError(t, d.stop(ctx, r, 1))
	assert.NoFileExists(t, own)
	assert.NoFileExists(t, d.record())
}

// A private daemon's start makes its missing directory mode 0700,
// whatever the umask; another's start leaves the mode to the umask.
func TestPrivateDaemonMakesItsDirectory0700(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	ctx := context.Background()
	r := control.NewLocal("n1")
	d := daemon{dir: filepath.Join(t.TempDir(), "data", "proxy"), name: "d", private: true}
	require.NoError(t, d.start(ctx, r, []string{"sleep", "30"}))
	t.Cleanup(func() { _ = d.stop(context.Background(), r, 0) })
	fi, err := os.Stat(d.dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	assert.Contains(t, d.startCmd([]string{"x"}), "; mkdir -p -m 0700 "+d.dir+" && cd ")
	assert.Contains(t, daemon{dir: "/d", name: "d"}.startCmd([]string{"x"}), "; mkdir -p /d && cd ")
}
