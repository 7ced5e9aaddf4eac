package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"chaos/testbed/bedtest"
)

// requireNoStorageLeft fails the test when a fault file system is still
// mounted or served on this machine, or a local node still runs.
func requireNoStorageLeft(t *testing.T, after string) {
	t.Helper()
	if out, _ := exec.Command("sh", "-c", storageLeft).CombinedOutput(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("the fault file system left after %s:\n%s", after, out)
	}
	if out, _ := exec.Command("pgrep", "-af", "client-addr 127.0.0.1[1-5]:7000").CombinedOutput(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("node processes left after %s:\n%s", after, out)
	}
}

// containsAny reports whether s holds any of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Issue 30's planted storage bugs are found by their campaign profiles
// (campaigns/bugs.yaml) in short local runs with fixed seeds, and nothing
// of the fault file system is left after each run.
func TestRunStorageFaultsFindTheirBugs(t *testing.T) {
	skipE2E(t)
	bedtest.RequireFUSE(t)
	for _, tc := range []struct {
		bug, seed, limit string
		// findings: the check that shows the bug, any one of them.
		findings, faults []string
	}{
		{"lazy-fsync", "1", "20s", []string{"came-back-with-less"}, []string{"--nemesis", "power-loss"}},
		{"no-dir-fsync", "1", "20s", []string{"raft: false"}, []string{"--nemesis", "power-loss"}},
		// A trusted flip in a record's data applies what no other node did
		// (state machine safety); one in its index field that goes back
		// truncates the log there, so the node restarts with less than it
		// had durable (came back with less). Which comes first is timing.
		{"trust-corrupt", "1", "30s", []string{"state-machine-safety", "came-back-with-less"},
			[]string{"--nemesis", "corrupt", "--corrupt-file", "wal", "--corrupt-how", "flip"}},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			store := t.TempDir()
			// Up to three runs (seeds seed, seed+1, seed+2), ending at the
			// first invalid one: whether a power loss drops what a node
			// acknowledged depends on timing too (lazy-fsync's seed 1 missed
			// once in 20 s in CI; its 60 s profile found it 10 of 10 times).
			code, out, errOut := runChaos(t, 5*time.Minute, append([]string{"run", "--time-limit", tc.limit, "--bug", tc.bug,
				"--nemesis-interval", "3s", "--store", store, "--seed", tc.seed, "--test-count", "3"}, tc.faults...)...)
			if code != exitInvalid || !containsAny(out, tc.findings) {
				t.Fatalf("exit %d, want 1 with one of %q\nstdout:\n%s\nstderr:\n%s", code, tc.findings, out, errOut)
			}
			requireNoStorageLeft(t, "the run")
		})
	}
}

// The correct chaos-node under the same faults stays valid; a run
// interrupted during a power loss heals (the nodes restarted), still
// checks, and leaves no mount and no process.
func TestRunStorageFaultsOnACorrectNode(t *testing.T) {
	skipE2E(t)
	bedtest.RequireFUSE(t)
	store := t.TempDir()
	code, out, errOut := runChaos(t, 3*time.Minute, "run", "--time-limit", "30s", "--nemesis", "power-loss,corrupt",
		"--nemesis-interval", "3s", "--store", store, "--seed", "1")
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	requireNoStorageLeft(t, "the run")

	bin, err := chaosBinary()
	if err != nil {
		t.Fatal(err)
	}
	interrupted := t.TempDir()
	out, err = interruptWhen(t, exec.Command(bin, "run", "--time-limit", "60s", "--nemesis", "power-loss",
		"--nemesis-interval", "1s", "--store", interrupted, "--seed", "2"), interrupted, "power-loss")
	if r := loadResults(t, requireStoreLayout(t, interrupted)); r["interrupted"] != true {
		t.Errorf("results.json does not say interrupted (%v):\n%s", err, out)
	}
	requireNoStorageLeft(t, "an interrupt")
}
