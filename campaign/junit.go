package campaign

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// junitSuites is the root of a JUnit XML report, in the shape CI systems
// (Jenkins, GitLab, GitHub Actions reporters) read: one suite for the
// campaign, one test case per test.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the campaign as JUnit XML: a test that missed its
// expectation is a failure whose text is the anomaly summary and the seed
// to replay; a test with a crashed run is an error; a test that did not
// run, or whose verdict stayed unknown, is skipped with the reason.
func WriteJUnit(w io.Writer, rec Record) error {
	suite := junitSuite{Name: rec.Campaign, Timestamp: rec.Started, Time: seconds(rec.DurationS)}
	for _, t := range rec.Tests {
		c := junitCase{Name: t.Name, Classname: rec.Campaign, Time: seconds(t.duration()), SystemOut: t.StatsLine()}
		switch {
		case t.Skipped != "":
			c.Skipped = &junitProblem{Message: t.Skipped}
			suite.Skipped++
		case t.Outcome == Errored:
			c.Error = &junitProblem{Message: "a run crashed: chaos could not set it up or run it", Type: Crashed, Text: t.problemText()}
			suite.Errors++
		case t.Outcome == Fail:
			c.Failure = &junitProblem{Message: t.missMessage(), Type: "expected " + t.Expect, Text: t.problemText()}
			suite.Failures++
		case t.Outcome == Undecided:
			c.Skipped = &junitProblem{Message: "unknown: no run decided the expectation (" + t.Expect + ")"}
			suite.Skipped++
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	root := junitSuites{Name: rec.Campaign, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// duration is the time the test's runs took together.
func (t TestResult) duration() float64 {
	var d float64
	for _, r := range t.Runs {
		d += r.DurationS
	}
	return d
}

// missMessage says how the test missed its expectation.
func (t TestResult) missMessage() string {
	if t.Expect == ExpectValid {
		return fmt.Sprintf("expected valid: %d of %d runs invalid", t.Stats.Verdicts[Invalid], t.Stats.Runs)
	}
	return fmt.Sprintf("expected invalid: no anomaly found in %d runs", t.Stats.Runs)
}

// problemText lists the runs that went against the expectation, each with
// its seed, directory and summary, and the command that replays the first.
func (t TestResult) problemText() string {
	var b strings.Builder
	for _, r := range t.Runs {
		if r.Verdict == Valid && t.Expect == ExpectValid || r.Verdict == Invalid && t.Expect == ExpectInvalid {
			continue
		}
		fmt.Fprintf(&b, "seed %d: %s", r.Seed, r.Verdict)
		if r.Dir != "" {
			fmt.Fprintf(&b, " (%s)", r.Dir)
		}
		b.WriteString("\n")
		if r.Summary != "" {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(strings.TrimSpace(r.Summary), "\n", "\n  "))
		}
	}
	if t.Replay != "" {
		fmt.Fprintf(&b, "replay: %s\n", t.Replay)
	}
	return b.String()
}

// StatsLine is the test's figures in one line: verdict counts, detection
// rate, median throughput and time to the first anomaly.
func (t TestResult) StatsLine() string {
	s := t.Stats
	line := fmt.Sprintf("runs %d: valid %d, invalid %d, unknown %d, crashed %d; detection rate %.0f%%; median %.0f ops/s",
		s.Runs, s.Verdicts[Valid], s.Verdicts[Invalid], s.Verdicts[Unknown], s.Verdicts[Crashed], 100*s.DetectionRate, s.OpsPerSMedian)
	if s.FirstAnomalyMedianS != nil {
		line += fmt.Sprintf("; first anomaly after %.1f s (median), %.1f s (max)", *s.FirstAnomalyMedianS, *s.FirstAnomalyMaxS)
	}
	return line
}
