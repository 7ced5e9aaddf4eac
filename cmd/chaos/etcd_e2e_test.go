package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"chaos/testbed"
	"chaos/testbed/bedtest"
	"chaos/testrun"
)

// etcdOnTestbed brings up five testbed hosts on subnet for the rest of the
// test (etcd from the machine's own etcd-server package, which the hosts
// share) and returns the arguments of a `chaos run` on them. Without
// root, a testbed or etcd it skips, or fails when CI=true.
func etcdOnTestbed(t *testing.T, subnet string) []string {
	t.Helper()
	sys := bedtest.Require(t, "etcd")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "tb")
	bedtest.Up(ctx, t, sys, testbed.Config{Dir: dir, Hosts: 5, Subnet: subnet})
	return []string{"run", "--db", "etcd", "--nodes-file", filepath.Join(dir, "nodes"),
		"--ssh-private-key", filepath.Join(dir, "id_ed25519"), "--known-hosts", filepath.Join(dir, "known_hosts")}
}

// runEtcd runs `chaos run` with the testbed flags and args into a store of
// its own, and returns the exit code, the summary and the run's results.
func runEtcd(t *testing.T, testbedFlags []string, args ...string) (int, string, testrun.Results) {
	t.Helper()
	store := t.TempDir()
	code, out, errOut := runChaos(t, 6*time.Minute, append(append(slices.Clone(testbedFlags), "--store", store), args...)...)
	run, err := filepath.EvalSymlinks(filepath.Join(store, "latest"))
	if err != nil {
		t.Fatalf("exit %d and no run in the store: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	res, err := testrun.ReadResults(run)
	if err != nil {
		t.Fatalf("exit %d: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	t.Logf("exit %d, ops %+v, leaders %v\n%s", code, res.Ops, res.Leaders, out)
	return code, out, res
}

// Issue 12: a default campaign against etcd on five hosts reaches a verdict,
// valid, and its clients back off rather than fill the history with the
// refusals of dead members; the leader is known during the run. Seed 1's
// schedule kills a majority for half the run (besides packet loss and a
// partition), the case that used to spin.
func TestEtcdDefaultFaultsOnTestbed(t *testing.T) {
	flags := etcdOnTestbed(t, "10.77.248.0/24")
	code, out, res := runEtcd(t, flags, "--time-limit", "60s", "--seed", "1")
	if code != exitOK {
		t.Errorf("exit %d, want 0 (valid)\n%s", code, out)
	}
	if res.Ops.Fail > 2*res.Ops.OK {
		t.Errorf("%d failures for %d successes: more than twice as many", res.Ops.Fail, res.Ops.OK)
	}
	if !slices.ContainsFunc(res.Leaders, func(c testrun.LeaderChange) bool { return strings.HasPrefix(c.Leader, "n") }) {
		t.Errorf("results.json names no leader: %v", res.Leaders)
	}
}

// Issue 12: etcd's serializable reads are answered from a member's own
// state, so under partitions (and even without: a follower applies a write
// after the leader acknowledged it) they are stale, and the summary says
// so. The control, linearizable reads under partitions and every other
// fault, is TestEtcdDefaultFaultsOnTestbed.
func TestEtcdSerializableReadsOnTestbed(t *testing.T) {
	flags := etcdOnTestbed(t, "10.77.249.0/24")
	// The test judges reads, not recovery: etcd's election after the final
	// heal has taken 5.2 s on this loaded 2-core machine (seed 2), over
	// the default 5 s bound.
	code, out, _ := runEtcd(t, flags, "--nemesis", "partition", "--nemesis-interval", "3s", "--time-limit", "30s",
		"--recovery", "10s", "--read-consistency", testrun.ReadSerializable, "--seed", "1")
	if code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s", code, exitInvalid, out)
	}
	if !strings.Contains(out, "linearizable: false") || !strings.Contains(out, "was overwritten by") {
		t.Errorf("the summary does not name a stale read:\n%s", out)
	}
}
