package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/campaign"
)

// junitReport is what CI systems read of junit.xml.
type junitReport struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// latestCampaign reads the newest campaign directory of name in store:
// its campaign.json and its junit.xml.
func latestCampaign(t *testing.T, store, name string) (campaign.Record, junitReport) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(filepath.Join(store, "campaigns", name, "latest"))
	require.NoError(t, err, "no campaign directory")
	rec, err := campaign.ReadRecord(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, campaign.JUnitFile))
	require.NoError(t, err)
	var j junitReport
	require.NoError(t, xml.Unmarshal(b, &j), "junit.xml does not parse")
	require.Len(t, j.Suites, 1)
	return rec, j
}

const smallCampaign = `defaults:
  time-limit: 6s
  nemesis-interval: 2s
  recovery: 3s
tests:
  - name: kill
    nemesis: kill
    seed: 11
  - name: partition
    nemesis: partition
    seed: 12
  - name: stale-read
    bug: stale-read
    nemesis: partition
    seed: 13
    count: 2
    expect: invalid
`

// Issue 13: a small campaign, two correct tests and a planted bug expected
// invalid, runs end to end in local mode; the JUnit XML and campaign.json
// say what happened; the same bug expected valid makes the campaign exit 1
// with a failure that names the seed to replay.
func TestTestAllSmallCampaign(t *testing.T) {
	skipE2E(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "small.yaml")
	require.NoError(t, os.WriteFile(file, []byte(smallCampaign), 0o644))
	store := filepath.Join(dir, "store")
	code, out, errOut := runChaos(t, 5*time.Minute, "test-all", "--campaign", file, "--store", store)
	t.Logf("test-all exit %d\n%s", code, out)
	require.Equal(t, exitOK, code, "stderr:\n%s", lastLines(errOut, 20))
	assert.Contains(t, out, "first anomaly (median)")
	rec, j := latestCampaign(t, store, "small")
	assert.Equal(t, 3, j.Tests)
	assert.Zero(t, j.Failures)
	assert.Zero(t, j.Skipped)
	var names []string
	for _, c := range j.Suites[0].Cases {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"kill", "partition", "stale-read"}, names)
	require.Len(t, rec.Tests, 3)
	for _, tr := range rec.Tests {
		assert.Equal(t, campaign.Pass, tr.Outcome, tr.Name)
		for _, r := range tr.Runs {
			assert.DirExists(t, r.Dir, "%s seed %d", tr.Name, r.Seed)
			assert.Positive(t, r.OpsPerS, "%s seed %d", tr.Name, r.Seed)
		}
	}
	bug := rec.Tests[2]
	assert.Equal(t, []uint64{13, 14}, []uint64{bug.Runs[0].Seed, bug.Runs[1].Seed}, "run i has seed+i")
	require.NotNil(t, bug.Stats.FirstAnomalyMedianS, "an invalid run says when its first anomaly happened")
	assert.Less(t, *bug.Stats.FirstAnomalyMedianS, 30.0)

	testShardsMerge(t, file, rec, j)

	expectValid := strings.Replace(smallCampaign, "    expect: invalid\n", "", 1)
	require.NoError(t, os.WriteFile(file, []byte(expectValid), 0o644))
	code, out, errOut = runChaos(t, 3*time.Minute, "test-all", "--campaign", file, "--store", store, "--only", "stale-read")
	t.Logf("test-all --only stale-read, expected valid: exit %d\n%s", code, out)
	require.Equal(t, exitInvalid, code, "stderr:\n%s", lastLines(errOut, 20))
	rec, j = latestCampaign(t, store, "small")
	require.Len(t, j.Suites[0].Cases, 1)
	c := j.Suites[0].Cases[0]
	require.NotNil(t, c.Failure, "the missed expectation is a failure")
	invalid := rec.Tests[0].Runs[0]
	for _, r := range rec.Tests[0].Runs {
		if r.Verdict == campaign.Invalid {
			invalid = r
			break
		}
	}
	assert.Contains(t, c.Failure.Text, "replay: chaos run")
	assert.Contains(t, c.Failure.Text, "--seed "+strconv.FormatUint(invalid.Seed, 10))
	assert.Contains(t, c.Failure.Text, "linearizable: false", "the failure names the anomaly")
}

// testShardsMerge is issue 42's target: the campaign file run as three
// shards in stores of their own, as three CI jobs would (the third taking
// its index from JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets
// it), and merged, lists the same tests in the same order with the same
// seeds and run counts as the unsharded campaign (whole, j), in its table
// and its JUnit file.
func testShardsMerge(t *testing.T, file string, whole campaign.Record, j junitReport) {
	t.Helper()
	var dirs []string
	for i, shard := range []string{"1/3", "2/3", "auto/3"} {
		store := filepath.Join(t.TempDir(), "store")
		code, out, errOut := runChaosEnv(t, 3*time.Minute, append(os.Environ(), campaign.IndexEnv+"=2"),
			"test-all", "--campaign", file, "--store", store, "--shard", shard)
		require.Equal(t, exitOK, code, "shard %s: %s\n%s", shard, out, lastLines(errOut, 20))
		dir, err := filepath.EvalSymlinks(filepath.Join(store, "campaigns", "small", "latest"))
		require.NoError(t, err)
		rec, err := campaign.ReadRecord(dir)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("%d/3", i+1), rec.Shard)
		dirs = append(dirs, dir)
	}
	merged := filepath.Join(t.TempDir(), "store")
	code, out, errOut := runChaos(t, time.Minute, append([]string{"test-all", "merge", "--store", merged}, dirs[2], dirs[0], dirs[1])...)
	require.Equal(t, exitOK, code, "merge: %s\n%s", out, errOut)
	assert.Contains(t, out, "first anomaly (median)", "the table")
	rec, mj := latestCampaign(t, merged, "small")
	seeds := func(rec campaign.Record) map[string][]uint64 {
		m := map[string][]uint64{}
		for _, tr := range rec.Tests {
			for _, r := range tr.Runs {
				m[tr.Name] = append(m[tr.Name], r.Seed)
			}
		}
		return m
	}
	names := func(rec campaign.Record) (out []string) {
		for _, tr := range rec.Tests {
			out = append(out, tr.Name)
		}
		return out
	}
	assert.Equal(t, names(whole), names(rec))
	assert.Equal(t, seeds(whole), seeds(rec))
	var cases, mcases []string
	for i := range j.Suites[0].Cases {
		cases = append(cases, j.Suites[0].Cases[i].Name)
	}
	for i := range mj.Suites[0].Cases {
		mcases = append(mcases, mj.Suites[0].Cases[i].Name)
	}
	assert.Equal(t, cases, mcases)
	assert.Equal(t, j.Tests, mj.Tests)

	code, _, errOut = runChaos(t, time.Minute, "test-all", "merge", "--store", merged, dirs[0], dirs[2])
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "shard 2/3 is missing")
}

// Issue 13: chaos run --test-count 3 --keep-going runs all three even past
// an invalid one, and prints and stores the statistics.
func TestRunTestCountKeepGoing(t *testing.T) {
	skipE2E(t)
	store := t.TempDir()
	code, out, errOut := runChaos(t, 4*time.Minute, "run", "--test-count", "3", "--keep-going", "--time-limit", "6s",
		"--recovery", "3s", "--bug", "stale-read", "--nemesis", "partition", "--nemesis-interval", "2s",
		"--name", "repeated", "--store", store, "--seed", "31")
	t.Logf("exit %d\n%s", code, out)
	require.Contains(t, []int{exitOK, exitInvalid}, code, "stderr:\n%s", lastLines(errOut, 20))
	assert.Contains(t, out, "detection rate")
	rec, _ := latestCampaign(t, store, "repeated")
	require.Len(t, rec.Tests, 1)
	s := rec.Tests[0].Stats
	assert.Equal(t, 3, s.Runs, "--keep-going runs every count")
	assert.InDelta(t, float64(s.Verdicts[campaign.Invalid])/3, s.DetectionRate, 1e-9)
	if s.Verdicts[campaign.Invalid] > 0 {
		assert.Equal(t, exitInvalid, code)
		require.NotNil(t, s.FirstAnomalyMedianS)
		require.NotNil(t, s.FirstAnomalyMaxS)
	}
}

// Issue 13: Ctrl-C mid-campaign interrupts the running test as chaos run
// does (healed, checked), skips the rest, still writes campaign.json and
// junit.xml, and exits 255.
func TestTestAllInterrupted(t *testing.T) {
	skipE2E(t)
	bin, err := chaosBinary()
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "long.yaml")
	require.NoError(t, os.WriteFile(file, []byte(
		"defaults:\n  time-limit: 60s\n  nemesis-interval: 1s\ntests:\n  - name: partition\n    nemesis: partition\n    seed: 41\n  - name: after\n"), 0o644))
	store := filepath.Join(dir, "store")
	out, err := interruptMidPartition(t, exec.Command(bin, "test-all", "--campaign", file, "--store", store), store)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "output:\n%s", out)
	assert.Equal(t, exitSetup, ee.ExitCode())
	rec, j := latestCampaign(t, store, "long")
	assert.True(t, rec.Interrupted)
	require.Len(t, rec.Tests, 2)
	require.Len(t, rec.Tests[0].Runs, 1, "the interrupted run is recorded")
	assert.Contains(t, rec.Tests[0].Skipped, "interrupted")
	assert.NotEmpty(t, rec.Tests[1].Skipped)
	assert.Equal(t, 2, j.Skipped, "the interrupted test and the one that never ran are skipped in junit.xml")
	if ipt, err := exec.Command("iptables", "-w", "-S").CombinedOutput(); err == nil && strings.Contains(string(ipt), "CHAOS") {
		t.Errorf("iptables rules left behind:\n%s", ipt)
	}
}
