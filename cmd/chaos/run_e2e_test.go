package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// chaosBinary builds the chaos binary once: local mode deploys the running
// executable, which under `go test` would be the test binary.
var chaosBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "chaos-run-e2e")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "chaos")
	if out, err := exec.Command("go", "build", "-o", bin, "chaos/cmd/chaos").CombinedOutput(); err != nil {
		return "", &buildFailure{string(out)}
	}
	return bin, nil
})

type buildFailure struct{ out string }

func (b *buildFailure) Error() string { return "go build: " + b.out }

// runChaos runs the built binary and returns its exit code and output.
func runChaos(t *testing.T, timeout time.Duration, args ...string) (int, string, string) {
	t.Helper()
	return runChaosEnv(t, timeout, nil, args...)
}

// runChaosEnv is runChaos with the environment env (nil: this process's).
func runChaosEnv(t *testing.T, timeout time.Duration, env []string, args ...string) (int, string, string) {
	t.Helper()
	bin, err := chaosBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("chaos %v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}

func skipE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
}

// needProgram skips the test when program is not on PATH, or fails it in
// CI (CI=true), where test.sh installs the Debian package pkg.
func needProgram(t *testing.T, program, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(program); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing; test.sh installs it with apt-get install -y %s", program, pkg)
	}
	t.Skipf("%s is not installed (apt-get install -y %s)", program, pkg)
}

// The store holds every file of the contract.
func requireStoreLayout(t *testing.T, store string) string {
	t.Helper()
	run, err := filepath.EvalSymlinks(filepath.Join(store, "latest"))
	if err != nil {
		t.Fatalf("store/latest: %v", err)
	}
	for _, f := range []string{"test.json", "history.jsonl", "results.json", "report.html", "chaos.log",
		"linearizable", "nodes/n1/events.jsonl", "nodes/n5/node.log"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("run directory lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(run), "latest")); err != nil {
		t.Errorf("store/<name>/latest: %v", err)
	}
	return run
}

func loadResults(t *testing.T, run string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(run, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Local mode against a correct chaos-node, with every fault the
// environment allows and 100 clients: valid (the write order decides every
// key, however concurrent), and the store is complete.
func TestRunLocalModeIsValid(t *testing.T) {
	skipE2E(t)
	store := t.TempDir()
	code, out, errOut := runChaos(t, 3*time.Minute, "run", "--time-limit", "20s", "--nemesis-interval", "3s",
		"--concurrency", "100", "--store", store, "--seed", "7")
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "verdict: true") || !strings.Contains(out, "report:") {
		t.Errorf("summary lacks the verdict or the report path:\n%s", out)
	}
	run := requireStoreLayout(t, store)
	r := loadResults(t, run)
	if r["valid"] != true || r["seed"] != 7.0 {
		t.Errorf("results.json: valid=%v seed=%v", r["valid"], r["seed"])
	}
	requireDecidedByWriteOrder(t, r)
}

// requireDecidedByWriteOrder checks that the write order decided every key
// of the linearizable check in results r.
func requireDecidedByWriteOrder(t *testing.T, r map[string]any) {
	t.Helper()
	lin, _ := r["checks"].(map[string]any)["linearizable"].(map[string]any)
	decided, _ := lin["decided_by"].(map[string]any)
	if lin == nil || decided["write-order"] != lin["partitions"] || decided["search"] != nil {
		t.Errorf("linearizable: decided_by %v for %v keys, want every key by write-order", lin["decided_by"], lin["partitions"])
	}
}

// A planted stale-read bug under partitions is found at 100 clients, and
// the summary names the anomaly.
func TestRunFindsStaleReads(t *testing.T) {
	skipE2E(t)
	store := t.TempDir()
	code, out, errOut := runChaos(t, 3*time.Minute, "run", "--time-limit", "20s", "--bug", "stale-read",
		"--nemesis", "partition", "--nemesis-interval", "2s", "--concurrency", "100", "--store", store, "--seed", "3")
	if code != exitInvalid {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "linearizable: false") || !strings.Contains(out, "key k") {
		t.Errorf("summary does not name the anomaly:\n%s", out)
	}
	requireDecidedByWriteOrder(t, loadResults(t, requireStoreLayout(t, store)))
}

// Interrupting a run mid-partition heals, still checks and reports, and
// leaves no fault behind.
func TestRunInterruptedMidPartitionLeavesNothing(t *testing.T) {
	skipE2E(t)
	bin, err := chaosBinary()
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	cmd := exec.Command(bin, "run", "--time-limit", "60s", "--nemesis", "partition", "--nemesis-interval", "1s",
		"--store", store, "--seed", "11")
	interruptMidPartition(t, cmd, store)
	run := requireStoreLayout(t, store)
	if r := loadResults(t, run); r["interrupted"] != true {
		t.Errorf("results.json does not say interrupted: %v", r["interrupted"])
	}
	if out, err := exec.Command("iptables", "-w", "-S").CombinedOutput(); err == nil && strings.Contains(string(out), "CHAOS") {
		t.Errorf("iptables rules left behind:\n%s", out)
	}
	if out, _ := exec.Command("pgrep", "-af", "client-addr 127.0.0.1[1-5]:7000").CombinedOutput(); len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("node processes left behind:\n%s", out)
	}
}

// interruptMidPartition is interruptWhen a partition started.
func interruptMidPartition(t *testing.T, cmd *exec.Cmd, store string) (string, error) {
	t.Helper()
	return interruptWhen(t, cmd, store, "partition")
}

// interruptWhen starts cmd, a chaos command writing runs into store, sends
// it SIGINT once the newest run's history shows a start of the family, and
// returns its output and exit error (nil for exit 0). It fails the test
// when no such fault starts within 60 s or cmd does not end within 90 s of
// the interrupt.
func interruptWhen(t *testing.T, cmd *exec.Cmd, store, family string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		h, _ := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
		if bytes.Contains(h, []byte(`"start-`+family+`"`)) {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no %s started within 60 s:\n%s", family, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%s did not end after an interrupt:\n%s", cmd.Args[1], out.String())
	}
	return "", nil
}

// The same campaign over SSH on testbed hosts, as CI runs it (root).
func TestRunOnTestbedOverSSH(t *testing.T) {
	skipE2E(t)
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the testbed end-to-end test needs root in CI")
		}
		t.Skip("needs root for the testbed")
	}
	dir := filepath.Join(t.TempDir(), "tb")
	code, out, errOut := runChaos(t, 2*time.Minute, "testbed", "up", "--hosts", "3", "--dir", dir, "--subnet", "10.77.245.0/24")
	if code != exitOK {
		t.Fatalf("testbed up: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { runChaos(t, 2*time.Minute, "testbed", "down", "--dir", dir) })
	store := t.TempDir()
	code, out, errOut = runChaos(t, 4*time.Minute, "run", "--nodes-file", filepath.Join(dir, "nodes"),
		"--ssh-private-key", filepath.Join(dir, "id_ed25519"), "--known-hosts", filepath.Join(dir, "known_hosts"),
		"--time-limit", "15s", "--nemesis-interval", "3s", "--store", store, "--seed", "5")
	if code != exitOK {
		t.Fatalf("run on the testbed: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	run, err := filepath.EvalSymlinks(filepath.Join(store, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"history.jsonl", "results.json", "report.html", "nodes/n3/events.jsonl"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("run directory lacks %s: %v", f, err)
		}
	}
}

// A controller killed with SIGKILL mid-partition leaves its fault behind;
// `chaos heal`, given the run's store and nothing else, then leaves the
// host clean and says which run it healed.
func TestHealAfterControllerKilledMidPartition(t *testing.T) {
	skipE2E(t)
	if os.Geteuid() != 0 {
		t.Skip("iptables partitions need root")
	}
	bin, err := chaosBinary()
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	cmd := exec.Command(bin, "run", "--time-limit", "60s", "--nemesis", "partition", "--nemesis-interval", "1s",
		"--store", store, "--seed", "13")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The nodes outlive their controller: stop them however the test ends.
	t.Cleanup(func() { _ = exec.Command("pkill", "-KILL", "-f", "client-addr 127.0.0.1[1-5]:7000").Run() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		h, _ := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
		if bytes.Contains(h, []byte(`"start-partition","value":{"`)) && !bytes.Contains(h, []byte(`"stop-partition"`)) {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no partition started within 60 s:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	rules, _ := exec.Command("iptables", "-w", "-S").CombinedOutput()
	if !strings.Contains(string(rules), "CHAOS") {
		t.Fatalf("expected the killed controller's partition rules on the host:\n%s", rules)
	}
	code, stdout, stderr := runChaos(t, 2*time.Minute, "heal", "--store", store)
	if code != exitOK {
		t.Fatalf("chaos heal: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "healing run chaos-node-register-partition/") || !strings.Contains(stdout, ": chaos-node on local mode, nemesis partition\n") {
		t.Errorf("chaos heal does not name the run it heals:\n%s", stdout)
	}
	rules, _ = exec.Command("iptables", "-w", "-S").CombinedOutput()
	if strings.Contains(string(rules), "CHAOS") {
		t.Errorf("chaos heal left iptables rules:\n%s", rules)
	}
}
