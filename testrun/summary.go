package testrun

import (
	"fmt"
	"os"
	"sort"

	"chaos/checker"
	"chaos/history/faultrec"
	"chaos/internal/atomicfile"
)

// summarize prints what a person acts on: the verdict, failed checks and
// their anomalies in words, and where the report and history are.
func (r *run) summarize(res Result) {
	w := r.env.Out
	fmt.Fprintf(w, "ops: %d invoked, %d ok, %d fail, %d info\n", res.Report.Ops.Invoke, res.Report.Ops.OK, res.Report.Ops.Fail, res.Report.Ops.Info)
	if f := res.Faults; f != (faultrec.Tally{}) {
		fmt.Fprintf(w, "faults: %d started, %d refused, %d failed, %d cut short, %d probe misses\n",
			f.Started, f.Refused, f.Failed, f.CutShort, f.ProbeMisses)
	}
	for _, l := range checkLines(res.Report, true) {
		fmt.Fprintln(w, l)
	}
	if res.Interrupted {
		fmt.Fprintln(w, "interrupted: the history recorded so far was checked")
	}
	fmt.Fprintf(w, "verdict: %v\nreport:  %s\nhistory: %s\n", res.Valid, r.rd.path("report.html"), r.rd.path("history.jsonl"))
}

// Anomalies are the summary's lines about the checks that are not valid:
// each one's name and verdict, then what it found, indented.
func Anomalies(report checker.Report) []string { return checkLines(report, false) }

// checkLines are a line per check (each valid one too when all) in name
// order, each that is not valid followed by its findings.
func checkLines(report checker.Report, all bool) []string {
	names := make([]string, 0, len(report.Checks))
	for n := range report.Checks {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines []string
	for _, n := range names {
		c := report.Checks[n]
		if c.Valid == checker.Valid && !all {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: %v", n, c.Valid))
		if c.Valid != checker.Valid {
			for _, l := range checker.Findings(c.Details) {
				lines = append(lines, "  "+l)
			}
		}
	}
	return lines
}

// writeLinearizableSummary writes linearizable/summary.txt: the
// linearizability verdict and what the check found, beside the
// visualizations of failing keys (if any).
func (r *run) writeLinearizableSummary(res Result) error {
	c, ok := res.Report.Checks["linearizable"]
	if !ok {
		return nil
	}
	if err := os.MkdirAll(r.rd.path("linearizable"), 0o755); err != nil {
		return err
	}
	text := "linearizable: " + c.Valid.String() + "\n"
	for _, l := range checker.Findings(c.Details) {
		text += l + "\n"
	}
	return atomicfile.WriteFile(r.rd.path("linearizable", "summary.txt"), []byte(text), 0o644)
}
