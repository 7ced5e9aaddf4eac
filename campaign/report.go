package campaign

import (
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"

	"chaos/atomicfile"
	"chaos/checker"
	"chaos/history"
)

// reportData is what report.html shows.
type reportData struct {
	Name, Verdict, VerdictClass string
	Seed                        uint64
	Interrupted                 bool
	Ops                         checker.Counts
	Checks                      []reportCheck
	Faults                      []reportFault
	Leaders                     []LeaderChange
	Unavailable                 map[string]string
	Files                       []string
	Visualizations              []string
}

type reportCheck struct {
	Name, Verdict, Class string
	Findings             []string
}

type reportFault struct {
	TimeS float64
	F     string
	Value string
}

func verdictClass(v checker.Validity) string {
	switch v {
	case checker.Valid:
		return "valid"
	case checker.Invalid:
		return "invalid"
	}
	return "unknown"
}

func (r *run) reportData(res Result, h history.History, unavailable map[string]string) reportData {
	d := reportData{Name: r.o.Name, Seed: r.seed, Interrupted: res.Interrupted, Ops: res.Report.Ops,
		Verdict: res.Valid.String(), VerdictClass: verdictClass(res.Valid), Unavailable: unavailable,
		Leaders: r.leaders.list()}
	names := make([]string, 0, len(res.Report.Checks))
	for n := range res.Report.Checks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := res.Report.Checks[n]
		d.Checks = append(d.Checks, reportCheck{Name: n, Verdict: c.Valid.String(), Class: verdictClass(c.Valid),
			Findings: checker.Findings(c.Details)})
	}
	for _, op := range h.Nemesis() {
		d.Faults = append(d.Faults, reportFault{TimeS: float64(op.Time) / 1e9, F: op.F, Value: string(op.Value)})
	}
	if vis, _ := filepath.Glob(r.rd.path("linearizable", "*.html")); len(vis) > 0 {
		for _, v := range vis {
			d.Visualizations = append(d.Visualizations, filepath.Join("linearizable", filepath.Base(v)))
		}
	}
	d.Files = []string{"test.json", "history.jsonl", "results.json", "chaos.log"}
	if _, ok := res.Report.Checks["linearizable"]; ok {
		d.Files = append(d.Files, "linearizable/summary.txt")
	}
	if nodes, err := filepath.Glob(r.rd.path("nodes", "*", "*")); err == nil {
		for _, f := range nodes {
			rel, _ := filepath.Rel(r.rd.dir, f)
			d.Files = append(d.Files, rel)
		}
	}
	return d
}

var reportTemplate = template.Must(template.New("report").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>chaos: {{.Name}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
h1 span{padding:.1em .5em;border-radius:.3em;color:#fff}
.valid{background:#2e7d32}.invalid{background:#c62828}.unknown{background:#f9a825}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}
code{font-size:90%}
</style></head><body>
<h1>{{.Name}} <span class="{{.VerdictClass}}">{{.Verdict}}</span></h1>
<p>Seed {{.Seed}} (replay with <code>--seed {{.Seed}}</code>).{{if .Interrupted}} <b>Interrupted:</b> the history recorded so far was checked.{{end}}</p>
<h2>Operations</h2>
<table><tr><th>invoked</th><th>ok</th><th>fail</th><th>info (unknown)</th></tr>
<tr><td>{{.Ops.Invoke}}</td><td>{{.Ops.OK}}</td><td>{{.Ops.Fail}}</td><td>{{.Ops.Info}}</td></tr></table>
<h2>Checks</h2>
<table>{{range .Checks}}<tr><td>{{.Name}}</td><td><span class="{{.Class}}" style="color:#fff;padding:0 .4em">{{.Verdict}}</span></td>
<td>{{range .Findings}}{{.}}<br>{{end}}</td></tr>{{end}}</table>
{{if .Visualizations}}<h2>Visualizations</h2><ul>{{range .Visualizations}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>{{end}}
<h2>Faults</h2>
{{if .Faults}}<table><tr><th>time (s)</th><th>op</th><th>targets</th></tr>
{{range .Faults}}<tr><td>{{printf "%.2f" .TimeS}}</td><td>{{.F}}</td><td><code>{{.Value}}</code></td></tr>{{end}}</table>
{{else}}<p>No faults were injected.</p>{{end}}
{{if .Unavailable}}<p>Not available in this environment:</p><ul>{{range $k, $v := .Unavailable}}<li>{{$k}}: {{$v}}</li>{{end}}</ul>{{end}}
<h2>Leaders</h2>
{{if .Leaders}}<table><tr><th>from (s)</th><th>leader</th></tr>
{{range .Leaders}}<tr><td>{{printf "%.1f" .TimeS}}</td><td>{{.Leader}}</td></tr>{{end}}</table>
{{else}}<p>This system does not say who leads.</p>{{end}}
<h2>Files</h2><ul>{{range .Files}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>
</body></html>
`))

// writeReport renders report.html: one self-contained page, no server needed.
func writeReport(path string, d reportData) error {
	return atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error { return reportTemplate.Execute(w, d) })
}

// summarize prints what a person acts on: the verdict, failed checks and
// their anomalies in words, and where the report and history are.
func (r *run) summarize(res Result) {
	w := r.env.Out
	fmt.Fprintf(w, "ops: %d invoked, %d ok, %d fail, %d info\n", res.Report.Ops.Invoke, res.Report.Ops.OK, res.Report.Ops.Fail, res.Report.Ops.Info)
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
