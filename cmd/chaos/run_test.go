package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/nemesis"
)

// Bad input is refused with exit 254 before anything starts.
func TestRunRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"run", "--no-such-flag"},
		{"run", "--concurrency", "0"},
		{"run", "--concurrency", "many"},
		{"run", "--time-limit", "-1s"},
		{"run", "--nodes-file", filepath.Join(dir, "missing")},
		{"run", "--nodes", "a,b,a"},
		{"run", "--nodes", "a", "--nodes-file", blocked},
		{"run", "--nemesis", "kill,flood"},
		{"run", "--nemesis-interval", "0s"},
		{"run", "--db", "mysql"},
		{"run", "--workload", "queue"},
		{"run", "--db", "etcd"},
		{"run", "--test-count", "0"},
		{"run", "--keys", "0"},
		{"run", "--read-consistency", "eventual"},
		{"run", "--clock-strategy", "ntp"},
		{"run", "--name", "../outside"},
		{"run", "--name", "two\nlines"},
		{"run", "--name", "latest"},
		{"run", "--corrupt-file", "wal,journal"},
		{"run", "--corrupt-how", "shred"},
		{"run", "--node-process", "vm"},
		{"run", "--node-process", "container"}, // local mode has no container
		{"run", "--storage-names", "ext4"},
		{"run", "--nemesis", "kill", "--corrupt-how", "flip"},
		{"run", "--nemesis", "kill", "--storage-names", "ordered"},
	}
	for _, args := range cases {
		if got := run(append(args, "--store", store)); got != exitUsage {
			t.Errorf("chaos %v: exit %d, want %d", args, got, exitUsage)
		}
	}
	if got := run([]string{"run", "--store", filepath.Join(blocked, "sub"), "--time-limit", "1s"}); got != exitUsage {
		t.Errorf("unwritable store: exit %d, want %d", got, exitUsage)
	}
	if entries, _ := os.ReadDir(store); len(entries) > 0 {
		t.Errorf("bad input wrote into the store: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(dir, "outside")); err == nil {
		t.Errorf("--name ../outside wrote outside the store")
	}
}

// The system clock strategy sets hosts' real clocks: on hosts that share
// this machine's clock (local mode here) it is refused before any node
// starts, naming why.
func TestRunRefusesTheSystemClockOnASharedClock(t *testing.T) {
	code, _, errOut := execute(t, "run", "--nemesis", "clock", "--clock-strategy", "system", "--time-limit", "1s",
		"--store", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, "share this machine's clock") {
		t.Errorf("exit %d, want %d naming the shared clock; stderr:\n%s", code, exitUsage, errOut)
	}
}

// `chaos run --help` documents every fault family of the registry, and a
// family it does not hold is refused, naming it and the ones there are.
func TestRunHelpDocumentsEveryFaultFamily(t *testing.T) {
	code, out, _ := execute(t, "run", "--help")
	if code != 0 {
		t.Fatalf("chaos run --help: exit %d", code)
	}
	for _, fam := range nemesis.Families() {
		if !strings.Contains(out, fam.Name+" ") || !strings.Contains(out, fam.Doc) {
			t.Errorf("chaos run --help does not document %s (%q)", fam.Name, fam.Doc)
		}
	}
	code, _, errOut := execute(t, "run", "--corrupt-file", "wal,journal", "--store", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, `--corrupt-file "journal": want a comma list of wal,snapshot,random`) {
		t.Errorf("unknown file kind: exit %d, %q", code, errOut)
	}
	code, _, errOut = execute(t, "run", "--nemesis", "kill,flood", "--store", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, `--nemesis "flood": want a comma list of kill,pause,partition,clock,packet`) {
		t.Errorf("unknown family: exit %d, %q", code, errOut)
	}
}

// Local mode refuses a state directory another user could have planted
// (here one writable by all): one line naming it, exit 255, and no node is
// started.
func TestRunRefusesAPlantedLocalDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, fmt.Sprintf("chaos-local-%d", os.Getuid()))
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chmod(dir, 0o777))
	code, _, errOut := execute(t, "run", "--time-limit", "1s", "--store", t.TempDir())
	assert.Equal(t, exitSetup, code)
	assert.Contains(t, errOut, dir+" has mode 0777, writable by others who may have planted pidfiles: refused")
	assert.NotContains(t, strings.TrimSpace(errOut), "\n")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written into it")
}

// Container hosts: a name Docker could not have given is bad input (254,
// one line); a container that does not exist, a stopped one or a daemon
// that does not answer is a setup failure (255, one line naming the host),
// before any node starts.
func TestRunRefusesBadContainerHosts(t *testing.T) {
	for _, nodes := range []string{"docker:", "docker:-H tcp://evil", "docker:a;b", "docker:compose:", "docker:compose:a/b"} {
		code, _, errOut := execute(t, "run", "--nodes", nodes, "--time-limit", "1s", "--store", t.TempDir())
		if code != exitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "want docker:") {
			t.Errorf("--nodes %q: exit %d, want %d with one line saying the form; stderr:\n%s", nodes, code, exitUsage, errOut)
		}
	}
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	code, _, errOut := execute(t, "run", "--nodes", "docker:chaos-nobody", "--time-limit", "1s", "--store", t.TempDir())
	if code != exitSetup || !strings.Contains(errOut, "docker:chaos-nobody: the Docker daemon does not answer") {
		t.Errorf("daemon down: exit %d, want %d naming it; stderr:\n%s", code, exitSetup, errOut)
	}
}

// A container's clock is its Docker host's: the system clock strategy is
// refused on container hosts before any is reached.
func TestRunRefusesTheSystemClockOnContainers(t *testing.T) {
	code, _, errOut := execute(t, "run", "--nodes", "docker:a,docker:b,docker:c", "--clock-strategy", "system",
		"--time-limit", "1s", "--store", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, "a container's clock is its Docker host's") {
		t.Errorf("exit %d, want %d naming the Docker host's clock; stderr:\n%s", code, exitUsage, errOut)
	}
}
