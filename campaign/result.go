package campaign

import (
	"slices"
)

// Verdicts of one run.
const (
	Valid   = "valid"
	Invalid = "invalid"
	Unknown = "unknown"
	// Crashed is a run that did not reach a verdict because chaos could
	// not set it up or run it (exit 255).
	Crashed = "crashed"
)

// Outcomes of a test.
const (
	Pass = "pass"
	// Fail is a test that missed its expectation: an invalid run where
	// valid was expected, or no invalid run where invalid was.
	Fail = "fail"
	// Undecided is a test whose decided runs did not contradict its
	// expectation, but some run was unknown and the expectation needs it.
	Undecided = "unknown"
	// Errored is a test with a crashed run.
	Errored = "error"
)

// Run is one run of a test.
type Run struct {
	Seed    uint64 `json:"seed"`
	Verdict string `json:"verdict"`
	// Dir is the run's directory in the store ("" when it crashed before
	// making one).
	Dir       string  `json:"dir,omitempty"`
	DurationS float64 `json:"duration_s"`
	// FirstAnomalyS is the time from the start of the load to the first
	// operation that is part of an anomaly; absent without one.
	FirstAnomalyS *float64 `json:"first_anomaly_s,omitempty"`
	// OpsPerS is client operations completed per second of load.
	OpsPerS float64 `json:"ops_per_s"`
	// Summary is the anomalies in words, or why the run crashed.
	Summary string `json:"summary,omitempty"`
	// Replay is the chaos run command line that replays this run.
	Replay string `json:"replay"`
}

// Stats are the figures over a test's runs.
type Stats struct {
	Runs int `json:"runs"`
	// Verdicts counts the runs by verdict.
	Verdicts map[string]int `json:"verdicts"`
	// DetectionRate is the share of runs that were invalid.
	DetectionRate float64 `json:"detection_rate"`
	// FirstAnomalyMedianS and FirstAnomalyMaxS are over the runs that found
	// an anomaly; absent when none did.
	FirstAnomalyMedianS *float64 `json:"first_anomaly_median_s,omitempty"`
	FirstAnomalyMaxS    *float64 `json:"first_anomaly_max_s,omitempty"`
	OpsPerSMedian       float64  `json:"ops_per_s_median"`
}

// Summarize computes the statistics of runs.
func Summarize(runs []Run) Stats {
	s := Stats{Runs: len(runs), Verdicts: map[string]int{Valid: 0, Invalid: 0, Unknown: 0, Crashed: 0}}
	var first, rates []float64
	for _, r := range runs {
		s.Verdicts[r.Verdict]++
		if r.FirstAnomalyS != nil {
			first = append(first, *r.FirstAnomalyS)
		}
		if r.Verdict != Crashed {
			rates = append(rates, r.OpsPerS)
		}
	}
	if len(runs) > 0 {
		s.DetectionRate = float64(s.Verdicts[Invalid]) / float64(len(runs))
	}
	if len(first) > 0 {
		med, mx := median(first), slices.Max(first)
		s.FirstAnomalyMedianS, s.FirstAnomalyMaxS = &med, &mx
	}
	if len(rates) > 0 {
		s.OpsPerSMedian = median(rates)
	}
	return s
}

// median is the middle value of xs (the mean of the two middle ones for
// an even count); xs is not changed.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Judge is a test's outcome given its expectation and its runs' verdicts:
// Errored with a crashed run; for an expected valid test, Fail with an
// invalid run; for an expected invalid one, Pass with an invalid run (the
// bug was found); otherwise Undecided when a run was unknown, else Pass
// for valid and Fail for invalid.
func Judge(expect string, s Stats) string {
	switch {
	case s.Verdicts[Crashed] > 0:
		return Errored
	case expect == ExpectValid && s.Verdicts[Invalid] > 0:
		return Fail
	case expect == ExpectInvalid && s.Verdicts[Invalid] > 0:
		return Pass
	case s.Verdicts[Unknown] > 0:
		return Undecided
	case expect == ExpectValid:
		return Pass
	}
	return Fail
}

// ExitCode is the campaign's exit status, with Jepsen's priority: 255 if
// any run crashed, else 1 if any test missed its expectation, else 2 if any
// run was unknown, else 0. interrupted (the campaign was stopped before it
// ended) makes it 255.
func ExitCode(tests []TestResult, interrupted bool) int {
	crashed, missed, unknown := interrupted, false, false
	for _, t := range tests {
		crashed = crashed || t.Stats.Verdicts[Crashed] > 0
		missed = missed || t.Outcome == Fail
		unknown = unknown || t.Stats.Verdicts[Unknown] > 0
	}
	switch {
	case crashed:
		return 255
	case missed:
		return 1
	case unknown:
		return 2
	}
	return 0
}

// TestResult is one test of a campaign, run.
type TestResult struct {
	Name    string `json:"name"`
	Expect  string `json:"expect"`
	Count   int    `json:"count"`
	Outcome string `json:"outcome"` // Pass, Fail, Undecided or Errored
	Stats   Stats  `json:"stats"`
	Runs    []Run  `json:"runs"`
	// Replay is the command line that replays the first run that missed
	// the expectation (or the first run), with its seed.
	Replay string `json:"replay,omitempty"`
	// Skipped says why the test did not run (the campaign was stopped).
	Skipped string `json:"skipped,omitempty"`
}
