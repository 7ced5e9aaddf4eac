package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"chaos/control"
	"chaos/testbed"
	"chaos/testbed/bedtest"
)

// Issue 27: a controller killed with SIGKILL heals nothing. On one
// testbed of three hosts running etcd:
//   - a run killed mid-partition leaves its DROP rules (and its etcd
//     nodes); the next run's setup removes them, names them in its
//     history's first line (a heal op), and its verdict is valid;
//   - a run killed while a pause is active leaves etcd stopped (state T);
//     `chaos heal` with no --db heals that run, named from the store (its
//     system and hosts; the key and known_hosts are the operator's flags),
//     and every etcd process runs again.
func TestLeftoversOfAKilledControllerOnTestbed(t *testing.T) {
	sys := bedtest.Require(t, "etcd", "iptables")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "tb")
	st := bedtest.Up(ctx, t, sys, testbed.Config{Dir: dir, Hosts: 3, Subnet: "10.77.237.0/24"})
	hosts := bedHosts(t, dir, st)
	flags := []string{"run", "--db", "etcd", "--nodes-file", filepath.Join(dir, testbed.NodesFile),
		"--ssh-private-key", filepath.Join(dir, testbed.KeyFile), "--known-hosts", filepath.Join(dir, testbed.KnownHostsFile)}

	// A run killed mid-partition.
	killed := t.TempDir()
	killWhenRecorded(t, append(slices.Clone(flags), "--nemesis", "partition", "--nemesis-interval", "1s",
		"--time-limit", "60s", "--store", killed, "--seed", "1"), killed, `"f":"start-partition"`)
	if left := hostsWith(hosts, "iptables -w -S", "-A CHAOS-PARTITION "); len(left) == 0 {
		t.Fatal("expected the killed controller's DROP rules on some host")
	}

	// The next run removes them first, says so, and is valid.
	store := t.TempDir()
	code, out, errOut := runChaos(t, 3*time.Minute, append(slices.Clone(flags), "--nemesis", "none", "--time-limit", "10s",
		"--store", store, "--seed", "2")...)
	if code != exitOK {
		t.Fatalf("the run after the crash: exit %d, want 0 (valid)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("the run after the crash:\n%s", out)
	if !strings.Contains(out, "setup: removed what an earlier run left on the hosts: ") {
		t.Errorf("the run does not say what it removed:\n%s", out)
	}
	first := firstHistoryOp(t, store)
	if first.F != "heal" || !slices.ContainsFunc(allLeftovers(first), func(s string) bool {
		return strings.HasPrefix(s, "iptables chain CHAOS-PARTITION (")
	}) {
		t.Errorf("the history's first line does not name the old rules: %+v", first)
	}
	if !slices.ContainsFunc(allLeftovers(first), regexp.MustCompile(`^etcd process \d+, running$`).MatchString) {
		t.Errorf("the history's first line does not name the old etcd processes: %+v", first)
	}
	if left := hostsWith(hosts, "iptables -w -S", "CHAOS"); len(left) > 0 {
		t.Errorf("chains of chaos's left on %v", left)
	}

	// A run killed mid-pause, healed by `chaos heal` with its store and
	// the operator's key and known_hosts.
	paused := t.TempDir()
	killWhenRecorded(t, append(slices.Clone(flags), "--nemesis", "pause", "--nemesis-interval", "1s",
		"--time-limit", "60s", "--store", paused, "--seed", "3"), paused, `"f":"pause"`)
	const states = `for p in $(pgrep -x etcd); do printf 'state:%s\n' "$(sed 's/.*) //' /proc/$p/stat | cut -c1)"; done`
	if stopped := hostsWith(hosts, states, "state:T"); len(stopped) == 0 {
		t.Fatal("expected an etcd process stopped (state T) by the killed controller's pause")
	}
	code, out, errOut = runChaos(t, 2*time.Minute, append([]string{"heal", "--store", paused}, bedTrust(dir)...)...)
	if code != exitOK {
		t.Fatalf("chaos heal: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "healing run etcd-register-pause/") || !strings.Contains(out, ": etcd on 3 hosts, nemesis pause\n") {
		t.Errorf("chaos heal does not name the run it heals:\n%s", out)
	}
	if stopped := hostsWith(hosts, states, "state:T"); len(stopped) > 0 {
		t.Errorf("etcd still stopped (state T) on %v after chaos heal", stopped)
	}
	if running := hostsWith(hosts, states, "state:"); len(running) != len(hosts) {
		t.Errorf("etcd runs on %v only, want every host", running)
	}
}

// bedHost is a testbed host reached over SSH.
type bedHost struct {
	name string
	r    control.Remote
}

// bedTrust are the flags that say how the operator reaches the testbed in
// dir: its key and known_hosts, which chaos heal never takes from a store.
func bedTrust(dir string) []string {
	return []string{"--ssh-private-key", filepath.Join(dir, testbed.KeyFile), "--known-hosts", filepath.Join(dir, testbed.KnownHostsFile)}
}

// bedHosts dials every host of the testbed st in dir, closed when the
// test ends.
func bedHosts(t *testing.T, dir string, st testbed.State) []bedHost {
	t.Helper()
	dialer, err := control.NewSSHDialer(control.SSHConfig{KeyFiles: []string{filepath.Join(dir, testbed.KeyFile)},
		KnownHosts: filepath.Join(dir, testbed.KnownHostsFile)})
	if err != nil {
		t.Fatal(err)
	}
	var out []bedHost
	for _, h := range st.Hosts {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := dialer.Dial(ctx, h.Addr)
		cancel()
		if err != nil {
			t.Fatalf("dial %s: %v", h.Name, err)
		}
		t.Cleanup(func() { _ = r.Close() })
		out = append(out, bedHost{name: h.Name, r: r})
	}
	return out
}

// hostsWith runs cmd on every host and returns the names of those whose
// output contains want.
func hostsWith(hosts []bedHost, cmd, want string) []string {
	var out []string
	for _, h := range hosts {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := h.r.Run(ctx, cmd)
		cancel()
		if err == nil && strings.Contains(string(res.Stdout), want) {
			out = append(out, h.name)
		}
	}
	return out
}

// killWhenRecorded runs chaos with args, writing into store, and kills it
// with SIGKILL as soon as the newest run's history holds needle: the
// controller dies with the fault in place. It fails the test when the
// needle does not come within 90 s.
func killWhenRecorded(t *testing.T, args []string, store, needle string) {
	t.Helper()
	bin, err := chaosBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		h, _ := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
		if bytes.Contains(h, []byte(needle)) {
			_ = cmd.Process.Kill()
			return
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no %s in the history within 90 s:\n%s", needle, out.String())
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronization
	}
}

// historyOp is a nemesis line of a history.
type historyOp struct {
	F     string `json:"f"`
	Value struct {
		Leftovers map[string][]string `json:"leftovers"`
	} `json:"value"`
}

// firstHistoryOp is the first line of the newest run's history in store.
func firstHistoryOp(t *testing.T, store string) historyOp {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	var op historyOp
	if err := json.Unmarshal(line, &op); err != nil {
		t.Fatalf("history's first line %q: %v", line, err)
	}
	return op
}

// allLeftovers is every leftover op names, on any node.
func allLeftovers(op historyOp) []string {
	var out []string
	for _, what := range op.Value.Leftovers {
		out = append(out, what...)
	}
	return out
}
