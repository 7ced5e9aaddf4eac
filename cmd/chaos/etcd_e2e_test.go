package main

import (
	"context"
	"fmt"
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
	"chaos/testrun/runrecord"
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
func runEtcd(t *testing.T, testbedFlags []string, args ...string) (int, string, runrecord.Results) {
	t.Helper()
	store := t.TempDir()
	code, out, errOut := runChaos(t, 6*time.Minute, append(append(slices.Clone(testbedFlags), "--store", store), args...)...)
	run, err := filepath.EvalSymlinks(filepath.Join(store, "latest"))
	if err != nil {
		t.Fatalf("exit %d and no run in the store: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	res, err := runrecord.ReadResults(run)
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
	if !slices.ContainsFunc(res.Leaders, func(c runrecord.LeaderChange) bool { return strings.HasPrefix(c.Leader, "n") }) {
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
// auto picks, and a run of them is valid. A controller SIGKILLed while a
// clock fault holds leaves patched processes, which `chaos heal` restores
// (the vDSO's own bytes back, every node running, none stopped). Then a
// node's realtime clock stepped 5 s ahead by `chaos vdso-clock` makes etcd
// itself log the clock difference against its peers: "prober found high
// clock drift" (chaos runs etcd with its zap logger).
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

	killMidClockFault(t, flags, store)
	if patched := patchedNodes(t, flags); len(patched) == 0 {
		t.Error("the killed controller left no node patched: the heal below tests nothing")
	}
	heal := append([]string{"heal", "--store", store}, flags[3:]...) // the testbed's flags, without run --db etcd
	if code, out, errOut := runChaos(t, 2*time.Minute, heal...); code != exitOK {
		t.Fatalf("heal: exit %d\n%s\n%s", code, out, errOut)
	}
	var drift func(string) (string, error) // a host that has the tool, and its node
	node := ""
	for i := range 5 {
		host := testbedHost(t, flags, i)
		name := fmt.Sprintf("n%d", i+1)
		shown, err := host(fmt.Sprintf(`r=/var/lib/chaos/etcd/%s/etcd.started; p=$(cut -d' ' -f1 $r) && grep State /proc/$p/status && if [ -x /opt/chaos/chaos-vdso-clock ]; then /opt/chaos/chaos-vdso-clock vdso-clock show --pid "$p" --started $r; fi`, name))
		if err != nil || strings.Contains(shown, "stopped") || strings.Contains(shown, `"patched":true`) {
			t.Errorf("%s after heal: %v\n%s", name, err, shown)
		}
		if drift == nil && strings.Contains(shown, `"patched":false`) {
			drift, node = host, name
		}
	}
	if drift == nil {
		t.Fatal("no host has chaos-vdso-clock after two runs of clock faults")
	}
	rec := fmt.Sprintf("/var/lib/chaos/etcd/%s/etcd.started", node)
	set := fmt.Sprintf(`p=$(cut -d' ' -f1 %s) && /opt/chaos/chaos-vdso-clock vdso-clock set --pid "$p" --started %s --tree --realtime 5s`, rec, rec)
	if out, err := drift(set); err != nil {
		t.Fatalf("vdso-clock set: %v\n%s", err, out)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		log, _ := drift(fmt.Sprintf(`grep -c 'prober found high clock drift' /var/lib/chaos/etcd/%s/etcd.log`, node))
		if n := strings.TrimSpace(log); n != "0" && n != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd %s logged no clock drift within 90 s of its clock stepped 5 s ahead", node)
		}
		time.Sleep(time.Second)
	}
	if code, out, errOut := runChaos(t, 2*time.Minute, heal...); code != exitOK {
		t.Fatalf("heal: exit %d\n%s\n%s", code, out, errOut)
	}
	if shown, err := drift(fmt.Sprintf(`p=$(cut -d' ' -f1 %s) && /opt/chaos/chaos-vdso-clock vdso-clock show --pid "$p" --started %s`, rec, rec)); err != nil || !strings.Contains(shown, `"patched":false`) {
		t.Errorf("after the second heal: %v\n%s", err, shown)
	}
}

// patchedNodes are the testbed's nodes whose etcd process holds a vdso
// clock patch.
func patchedNodes(t *testing.T, flags []string) []string {
	t.Helper()
	var out []string
	for i := range 5 {
		name := fmt.Sprintf("n%d", i+1)
		shown, _ := testbedHost(t, flags, i)(fmt.Sprintf(`r=/var/lib/chaos/etcd/%s/etcd.started; p=$(cut -d' ' -f1 $r) && if [ -x /opt/chaos/chaos-vdso-clock ]; then /opt/chaos/chaos-vdso-clock vdso-clock show --pid "$p" --started $r; fi`, name))
		if strings.Contains(shown, `"patched":true`) {
			out = append(out, name)
		}
	}
	return out
}

// killMidClockFault starts a run of long clock faults into store and
// sends its controller SIGKILL once the history shows a clock fault
// started, leaving the nodes running and patched.
func killMidClockFault(t *testing.T, flags []string, store string) {
	t.Helper()
	bin, err := chaosBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(slices.Clone(flags), "--store", store, "--nemesis", "clock",
		"--nemesis-interval", "60s", "--time-limit", "120s", "--seed", "3")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		runs, _ := filepath.Glob(filepath.Join(store, "etcd-register-clock", "*", "history.jsonl"))
		for _, h := range runs {
			if b, _ := os.ReadFile(h); strings.Contains(string(b), `"f":"clock-bump"`) {
				return // the deferred SIGKILL
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no clock fault started within 2 minutes")
		}
		time.Sleep(200 * time.Millisecond)
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
