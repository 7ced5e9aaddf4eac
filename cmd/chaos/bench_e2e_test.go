package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"chaos/bench"
	"chaos/testbed/bedtest"
)

// A short chaos bench of chaos-node compared with etcd (three local nodes
// each) with one leader kill: both measured, figures sane. The figures
// themselves are not asserted (CI machines differ); chaos bench prints
// them for the closing notes.
func TestBenchComparesChaosNodeWithEtcd(t *testing.T) {
	skipE2E(t)
	needProgram(t, "etcd", "etcd-server")
	code, out, errOut := runChaos(t, 3*time.Minute, "bench", "--compare", "etcd", "--duration", "2s",
		"--warmup", "500ms", "--clients", "16", "--failover", "1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var c bench.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("--json printed no comparison: %v\n%s", err, out)
	}
	for _, r := range []bench.Result{c.A, c.B} {
		requireSaneBench(t, r)
		requireOneFailover(t, r)
	}
	if c.A.System != "chaos-node" || c.B.System != "etcd" || len(c.Rows) == 0 {
		t.Errorf("compared %s with %s in %d rows", c.A.System, c.B.System, len(c.Rows))
	}
}

func requireSaneBench(t *testing.T, r bench.Result) {
	t.Helper()
	if r.Nodes != 3 || r.Clients != 16 || r.DurationS < 1.9 {
		t.Errorf("%s: %d nodes, %d clients, %.1f s measured", r.System, r.Nodes, r.Clients, r.DurationS)
	}
	for _, f := range []string{"read", "write"} {
		s := r.Op(f)
		if s.OK == 0 || s.PerSecond <= 0 || s.P50Ms <= 0 || s.P50Ms > s.P90Ms || s.P90Ms > s.P99Ms || s.P99Ms > s.MaxMs {
			t.Errorf("%s %s: insane figures %+v", r.System, f, s)
		}
	}
}

func requireOneFailover(t *testing.T, r bench.Result) {
	t.Helper()
	if f := r.Failover; f == nil || len(f.Kills) != 1 || !f.Kills[0].Recovered || f.MaxMs <= 0 {
		t.Errorf("%s: failover %+v, want one recovered kill", r.System, f)
	}
}

// benchComparison runs a short chaos bench comparing two systems (its
// flags, after the short windows' own) and returns the comparison it
// printed, each side's figures checked for sense.
func benchComparison(t *testing.T, flags ...string) bench.Comparison {
	t.Helper()
	args := append([]string{"bench", "--duration", "2s", "--warmup", "500ms", "--clients", "16", "--json"}, flags...)
	code, out, errOut := runChaos(t, 3*time.Minute, args...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var c bench.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("--json printed no comparison: %v\n%s", err, out)
	}
	requireSaneBench(t, c.A)
	requireSaneBench(t, c.B)
	return c
}

// chaos bench --storage-faults measures chaos-node through the fault file
// system and directly, in two rounds, and compares the medians; no mount
// is left after it.
func TestBenchStorageFaultsMeasuresTheFaultFileSystem(t *testing.T) {
	skipE2E(t)
	bedtest.RequireFUSE(t)
	c := benchComparison(t, "--storage-faults", "--rounds", "2")
	if c.A.System != "chaos-node on faultfs" || !c.A.StorageFaults || c.B.System != "chaos-node" || c.B.StorageFaults {
		t.Errorf("compared %s (storage faults %v) with %s (%v), want chaos-node on faultfs with chaos-node",
			c.A.System, c.A.StorageFaults, c.B.System, c.B.StorageFaults)
	}
	if c.Rounds != 2 || c.A.Runs != 2 || c.B.Runs != 2 {
		t.Errorf("%d rounds of %d and %d runs, want 2 of 2", c.Rounds, c.A.Runs, c.B.Runs)
	}
	for _, r := range c.Rows {
		if r.Ratio < r.RatioMin || r.Ratio > r.RatioMax {
			t.Errorf("%s: ratio %.2f outside its rounds' range %.2f-%.2f", r.Figure, r.Ratio, r.RatioMin, r.RatioMax)
		}
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), "fuse.faultfs") {
		t.Errorf("a fault file system is still mounted after the bench:\n%s", mounts)
	}
}

// chaos bench --vdso-clock measures chaos-node with its nodes' clock reads
// going through the vdso patch and without, and compares them.
func TestBenchVDSOClockMeasuresThePatch(t *testing.T) {
	skipE2E(t)
	if os.Geteuid() != 0 {
		t.Skip("the vdso clock traces the nodes: root")
	}
	c := benchComparison(t, "--vdso-clock")
	if c.A.System != "chaos-node with vdso clock" || !c.A.VDSOClock || c.B.System != "chaos-node" || c.B.VDSOClock {
		t.Errorf("compared %s (vdso clock %v) with %s (%v), want chaos-node with vdso clock with chaos-node",
			c.A.System, c.A.VDSOClock, c.B.System, c.B.VDSOClock)
	}
}
