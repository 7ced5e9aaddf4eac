package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"chaos/testbed"
	"chaos/testbed/bedtest"
)

// memberFaults are the faults of issue 17's end-to-end runs.
var memberFaults = []string{"--nemesis", "member,kill,partition", "--nemesis-interval", "3s", "--time-limit", "20s"}

// requireMemberCycles checks that the run in store changed the membership
// (a member removed and added back) at least once, and that every cycle
// finished but one the schedule's deadline cut short (the heal finishes
// it: the run's verdict covers that).
func requireMemberCycles(t *testing.T, store string) {
	t.Helper()
	h, err := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var done int
	for _, line := range bytes.Split(h, []byte("\n")) {
		switch {
		case !bytes.Contains(line, []byte(`"f":"start-member"`)):
		case bytes.Contains(line, []byte(`"error"`)):
			if !bytes.Contains(line, []byte("the schedule's deadline passed")) {
				t.Errorf("a member cycle failed: %s", line)
			}
		default:
			done++
		}
	}
	if done == 0 {
		t.Errorf("no member cycle finished")
	}
	t.Logf("%d member cycles finished", done)
}

// Issue 17: a correct chaos-node under membership changes, kills and
// partitions, in local mode: valid.
func TestRunMemberChangesLocally(t *testing.T) {
	skipE2E(t)
	store := t.TempDir()
	args := append([]string{"run", "--store", store, "--seed", "3"}, memberFaults...)
	code, out, errOut := runChaos(t, 3*time.Minute, args...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	requireMemberCycles(t, store)
}

// Issue 17: the same on testbed hosts over SSH.
func TestRunMemberChangesOnTestbed(t *testing.T) {
	skipE2E(t)
	sys := bedtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "tb")
	bedtest.Up(ctx, t, sys, testbed.Config{Dir: dir, Hosts: 3, Subnet: "10.77.239.0/24"})
	store := t.TempDir()
	args := append([]string{"run", "--nodes-file", filepath.Join(dir, "nodes"), "--ssh-private-key", filepath.Join(dir, "id_ed25519"),
		"--known-hosts", filepath.Join(dir, "known_hosts"), "--store", store, "--seed", "4"}, memberFaults...)
	code, out, errOut := runChaos(t, 4*time.Minute, args...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	requireMemberCycles(t, store)
}

// Issue 17: etcd under membership changes (its member API: remove, add as
// a learner, promote), kills and partitions, on testbed hosts: valid.
func TestEtcdMemberChangesOnTestbed(t *testing.T) {
	flags := etcdOnTestbed(t, "10.77.238.0/24")
	store := t.TempDir()
	// etcd's cycle takes 6-11 s (it refuses a removal until its members
	// have been connected for a while): 30 s leaves room for one or two.
	args := append(append(append(flags, "--store", store, "--seed", "5"), memberFaults...), "--time-limit", "30s")
	code, out, errOut := runChaos(t, 6*time.Minute, args...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	requireMemberCycles(t, store)
}
