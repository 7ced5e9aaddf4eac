package campaign

import (
	"bytes"
	"encoding/xml"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f(x float64) *float64 { return &x }

func TestSummarize(t *testing.T) {
	s := Summarize([]Run{
		{Verdict: Invalid, FirstAnomalyS: f(4), OpsPerS: 100},
		{Verdict: Valid, OpsPerS: 300},
		{Verdict: Invalid, FirstAnomalyS: f(10), OpsPerS: 200},
		{Verdict: Crashed},
	})
	assert.Equal(t, 4, s.Runs)
	assert.Equal(t, map[string]int{Valid: 1, Invalid: 2, Unknown: 0, Crashed: 1}, s.Verdicts)
	assert.InDelta(t, 0.5, s.DetectionRate, 1e-9)
	assert.InDelta(t, 7, *s.FirstAnomalyMedianS, 1e-9)
	assert.InDelta(t, 10, *s.FirstAnomalyMaxS, 1e-9)
	assert.InDelta(t, 200, s.OpsPerSMedian, 1e-9, "crashed runs have no throughput")
	assert.Nil(t, Summarize([]Run{{Verdict: Valid}}).FirstAnomalyMedianS)
}

func TestJudgeAndExitCode(t *testing.T) {
	stats := func(verdicts ...string) Stats {
		var runs []Run
		for _, v := range verdicts {
			runs = append(runs, Run{Verdict: v})
		}
		return Summarize(runs)
	}
	cases := []struct {
		expect   string
		verdicts []string
		outcome  string
		exit     int
	}{
		{ExpectValid, []string{Valid, Valid}, Pass, 0},
		{ExpectValid, []string{Valid, Invalid}, Fail, 1},
		{ExpectValid, []string{Valid, Unknown}, Undecided, 2},
		{ExpectValid, []string{Invalid, Unknown}, Fail, 1},
		{ExpectInvalid, []string{Valid, Invalid}, Pass, 0},
		{ExpectInvalid, []string{Invalid, Unknown}, Pass, 2},
		{ExpectInvalid, []string{Valid, Valid}, Fail, 1},
		{ExpectInvalid, []string{Valid, Unknown}, Undecided, 2},
		{ExpectValid, []string{Invalid, Crashed}, Errored, 255},
	}
	for _, c := range cases {
		s := stats(c.verdicts...)
		outcome := Judge(c.expect, s)
		assert.Equal(t, c.outcome, outcome, "%s %v", c.expect, c.verdicts)
		assert.Equal(t, c.exit, ExitCode([]TestResult{{Outcome: outcome, Stats: s}}, false), "%s %v", c.expect, c.verdicts)
	}
	assert.Equal(t, 255, ExitCode([]TestResult{{Outcome: Pass, Stats: stats(Valid)}}, true), "interrupted")
	assert.Equal(t, 1, ExitCode([]TestResult{{Outcome: Pass, Stats: stats(Unknown)}, {Outcome: Fail, Stats: stats(Invalid)}}, false),
		"a miss beats an unknown")
}

// The JUnit XML parses back with a case per test: a missed expectation is
// a failure naming the seed to replay, a crash an error, a test that did
// not run skipped.
func TestJUnit(t *testing.T) {
	miss := TestResult{Name: "kill", Expect: ExpectValid, Outcome: Fail,
		Runs:   []Run{{Seed: 42, Verdict: Invalid, Dir: "store/kill/1", Summary: "linearizable: key k1: a stale read", DurationS: 3}},
		Replay: "chaos run --nemesis kill --seed 42"}
	miss.Stats = Summarize(miss.Runs)
	ok := TestResult{Name: "pause", Expect: ExpectValid, Outcome: Pass, Runs: []Run{{Seed: 7, Verdict: Valid, DurationS: 2}}}
	ok.Stats = Summarize(ok.Runs)
	crash := TestResult{Name: "etcd", Expect: ExpectValid, Outcome: Errored, Runs: []Run{{Seed: 8, Verdict: Crashed, Summary: "ssh: refused"}}}
	crash.Stats = Summarize(crash.Runs)
	skipped := TestResult{Name: "late", Expect: ExpectInvalid, Skipped: "the campaign was interrupted before this test"}
	var b bytes.Buffer
	require.NoError(t, WriteJUnit(&b, Record{Campaign: "smoke", DurationS: 5, Tests: []TestResult{miss, ok, crash, skipped}}))

	var got junitSuites
	require.NoError(t, xml.Unmarshal(b.Bytes(), &got), b.String())
	assert.Equal(t, 4, got.Tests)
	assert.Equal(t, 1, got.Failures)
	assert.Equal(t, 1, got.Errors)
	assert.Equal(t, 1, got.Skipped)
	require.Len(t, got.Suites, 1)
	cases := got.Suites[0].Cases
	require.Len(t, cases, 4)
	assert.Equal(t, []string{"kill", "pause", "etcd", "late"}, []string{cases[0].Name, cases[1].Name, cases[2].Name, cases[3].Name})
	require.NotNil(t, cases[0].Failure)
	assert.Equal(t, "expected valid: 1 of 1 runs invalid", cases[0].Failure.Message)
	assert.Contains(t, cases[0].Failure.Text, "seed 42: invalid (store/kill/1)")
	assert.Contains(t, cases[0].Failure.Text, "a stale read")
	assert.Contains(t, cases[0].Failure.Text, "replay: chaos run --nemesis kill --seed 42")
	assert.Equal(t, "3.000", cases[0].Time)
	assert.Nil(t, cases[1].Failure)
	assert.Nil(t, cases[1].Skipped)
	require.NotNil(t, cases[2].Error)
	assert.Contains(t, cases[2].Error.Text, "ssh: refused")
	require.NotNil(t, cases[3].Skipped)
	assert.Equal(t, "the campaign was interrupted before this test", cases[3].Skipped.Message)
}

func TestRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rec := Record{Campaign: "smoke", File: "campaigns/smoke.yaml", Shard: "1/1", Exit: 0,
		Tests: []TestResult{{Name: "a", Expect: ExpectValid, Outcome: Pass, Stats: Summarize([]Run{{Verdict: Valid}}), Runs: []Run{{Verdict: Valid}}}}}
	require.NoError(t, rec.Write(dir))
	got, err := ReadRecord(dir)
	require.NoError(t, err)
	assert.Equal(t, rec, got)
	var b bytes.Buffer
	PrintTable(&b, rec.Tests)
	assert.Contains(t, b.String(), "test  runs  valid")
	assert.Contains(t, b.String(), "a     1     1")
}
