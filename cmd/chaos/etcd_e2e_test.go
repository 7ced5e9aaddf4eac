package main

import (
	"context"
	"os"
	"os/exec"
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

// Issue 41: on etcd (a Go program, which libfaketime cannot reach) the
// clock and lease families are available, through the vdso patch that
// auto picks, and a default-length run of them is valid. Then a node's
// realtime clock stepped 5 s ahead by `chaos vdso-clock` makes etcd itself
// log the clock difference against its peers (capnslog's "the clock
// difference against peer ... is too high"; zap's "prober found high clock
// drift"), and `chaos heal` puts the vDSO back, the node running.
func TestEtcdClockThroughTheVDSOOnTestbed(t *testing.T) {
	flags := etcdOnTestbed(t, "10.77.251.0/24")
	store := t.TempDir()
	code, out, errOut := runChaos(t, 6*time.Minute, append(slices.Clone(flags), "--store", store,
		"--nemesis", "clock,lease", "--nemesis-interval", "4s", "--time-limit", "30s", "--seed", "1")...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0 (valid)\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "unavailable") {
		t.Errorf("a family is unavailable:\n%s\n%s", out, errOut)
	}
	hist, err := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hist), `"mechanism":"vdso"`) {
		t.Errorf("no clock op of the vdso mechanism in the history")
	}

	// The nodes stay up for the drift check.
	code, out, errOut = runChaos(t, 3*time.Minute, append(slices.Clone(flags), "--store", store,
		"--nemesis", "none", "--time-limit", "3s", "--leave-db-running")...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	n1 := testbedHost(t, flags, 0)
	set := `p=$(cut -d' ' -f1 /var/lib/chaos/etcd/n1/etcd.started) && /opt/chaos/chaos-vdso-clock vdso-clock set --pid "$p" --started /var/lib/chaos/etcd/n1/etcd.started --tree --realtime 5s`
	if out, err := n1(set); err != nil {
		t.Fatalf("vdso-clock set: %v\n%s", err, out)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		log, _ := n1(`grep -c -e 'clock difference against peer' -e 'prober found high clock drift' /var/lib/chaos/etcd/n1/etcd.log`)
		if strings.TrimSpace(log) != "0" && strings.TrimSpace(log) != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd n1 logged no clock drift within 90 s of its clock stepped 5 s ahead")
		}
		time.Sleep(time.Second)
	}
	heal := append([]string{"heal", "--store", store}, flags[3:]...) // the testbed's flags, without run --db etcd
	if code, out, errOut := runChaos(t, 2*time.Minute, heal...); code != exitOK {
		t.Fatalf("heal: exit %d\n%s\n%s", code, out, errOut)
	}
	shown, err := n1(`p=$(cut -d' ' -f1 /var/lib/chaos/etcd/n1/etcd.started) && /opt/chaos/chaos-vdso-clock vdso-clock show --pid "$p" --started /var/lib/chaos/etcd/n1/etcd.started && grep State /proc/$p/status`)
	if err != nil || !strings.Contains(shown, `"patched":false`) || strings.Contains(shown, "stopped") {
		t.Errorf("after heal: %v\n%s", err, shown)
	}
}

// testbedHost returns a func that runs a shell command as root on the
// testbed host at index i of the run's nodes file, over ssh.
func testbedHost(t *testing.T, flags []string, i int) func(cmd string) (string, error) {
	t.Helper()
	flag := func(name string) string { return flags[slices.Index(flags, name)+1] }
	nodes, err := os.ReadFile(flag("--nodes-file"))
	if err != nil {
		t.Fatal(err)
	}
	host := strings.Fields(strings.Split(strings.TrimSpace(string(nodes)), "\n")[i])
	addr := host[len(host)-1]
	return func(cmd string) (string, error) {
		out, err := exec.Command("ssh", "-i", flag("--ssh-private-key"), "-o", "UserKnownHostsFile="+flag("--known-hosts"),
			"-o", "BatchMode=yes", "root@"+addr, cmd).CombinedOutput()
		return string(out), err
	}
}
