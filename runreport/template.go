package runreport

import (
	"fmt"
	"html/template"
	"time"
)

// pageFuncs are the template's helpers.
var pageFuncs = template.FuncMap{
	"at":      func(d time.Duration) string { return at(d) },
	"latency": func(d time.Duration) string { return seconds(d) },
	"size": func(n int64) string {
		switch {
		case n >= 1<<20:
			return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
		case n >= 1<<10:
			return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
		}
		return fmt.Sprintf("%d B", n)
	},
	"seconds": func(s float64) string { return fmt.Sprintf("%.1f s", s) },
}

// pageTemplate is report.html. Sections follow the order of the package
// comment; the charts share one time axis, so they line up.
var pageTemplate = template.Must(template.New("report").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos: {{.Name}} {{.Verdict}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222;max-width:1150px}
h1 .verdict{padding:.1em .5em;border-radius:.3em;color:#fff}
.valid{background:#2e7d32}.invalid{background:#c62828}.unknown{background:#f9a825}
span.valid,span.invalid,span.unknown{color:#fff;padding:0 .4em;border-radius:.2em}
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
code{font-size:90%}.note{color:#555;font-size:90%}
.legend span{margin-right:1.2em}
svg.chart{display:block;margin:.3em 0 .8em}
</style></head><body>
<h1>{{.Name}} <span id="verdict" class="verdict {{.VerdictClass}}">{{.Verdict}}</span></h1>
<p>Seed {{.Seed}} (replay with <code>--seed {{.Seed}}</code>){{with .Results.Started}}, started {{.}}{{end}}{{if .Results.DurationS}}, took {{seconds .Results.DurationS}}{{end}}.
{{- if .Results.Interrupted}} <b>Interrupted:</b> the history recorded so far was checked.{{end}}</p>
{{with .Command}}<p class="note">Command: <code>{{.}}</code></p>{{end}}
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
<p>Operations: {{.Results.Ops.Invoke}} invoked, {{.Results.Ops.OK}} ok, {{.Results.Ops.Fail}} fail, {{.Results.Ops.Info}} info (unknown).</p>

<h2>Checks</h2>
<table id="checks">{{range .Checks}}<tr class="check"><td>{{.Name}}</td><td><span class="{{.Class}}">{{.Verdict}}</span></td>
<td>{{range .Findings}}{{.Text}}{{with .Link}} (see <a href="{{.}}">{{.}}</a>){{end}}<br>{{end}}</td></tr>
{{end}}</table>
{{if .Visualizations}}<p id="anomalies">Porcupine's visualizations of the keys that are not linearizable:
{{range .Visualizations}} <a href="{{.}}">{{.}}</a>{{end}}</p>{{end}}

<h2>Latency</h2>
<p class="legend">{{range .Functions}}<span>{{.Name}} {{.Mark}}</span>{{end}}{{range .Outcomes}}<span style="color:{{.Color}}">■ {{.Name}}</span>{{end}}
{{- range $.FaultFamilies}}<span class="note">{{.}} band</span>{{end}}</p>
{{.Latency}}
<p class="note" id="thinning">Each operation is a point at its invoke time, its latency on a log scale; faults shade the time they were active.
{{.Thinning.Statement}} Points on the same pixel are drawn once.</p>

<h2>Throughput</h2>
{{.Throughput}}
<p class="note">Operations completed per second, in {{.BinWidth}} bins, a line per type (dashed as in the legend above) and outcome (coloured).</p>

<h2>Availability</h2>
{{.Availability}}
<p class="note">Windows of more than a second in which no operation succeeded, windows in which no node led the newest term (from the event logs), the time from each heal to the first successful operation, and the leader the controller saw, polled once a second.</p>

<h2>Nodes</h2>
{{.Timeline}}
<p class="note">Each node's role and term from its event log. {{.TimelineNote}}</p>

<h2>Latency quantiles</h2>
<table id="quantiles"><tr><th>operation</th><th>outcome</th><th>count</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>
{{range .Quantiles}}<tr><td>{{.F}}</td><td>{{.Type}}</td><td class="num">{{.Count}}</td><td class="num">{{latency .P50}}</td><td class="num">{{latency .P95}}</td><td class="num">{{latency .P99}}</td><td class="num">{{latency .Max}}</td></tr>
{{end}}</table>
<p class="note">Every completed operation is counted; p50, p95 and p99 are within 0.4% (a histogram of 128 steps per doubling of latency), count and max are exact.</p>

<h2>Faults</h2>
{{if .Faults}}<table id="faults"><tr><th>time</th><th>until</th><th>family</th><th>targets</th><th>mechanism</th><th>effect seen</th><th>first ok after its end</th></tr>
{{range .Faults}}<tr class="fault"><td class="num">{{at .Start}}</td><td class="num">{{if .Instant}}{{else if .Open}}never ended{{else}}{{at .End}}{{end}}</td><td>{{.Family}}</td><td>{{.Targets}}</td><td>{{.Mechanism}}</td><td>{{.Effect}}{{with .Error}} <b>failed:</b> {{.}}{{end}}</td>
<td class="num">{{if ge .EndIndex 0}}{{index $.Recoveries .EndIndex}}{{else if .IsHeal}}{{index $.Recoveries .StartIndex}}{{end}}</td></tr>
{{end}}</table>{{else}}<p>No faults were injected.</p>{{end}}
{{with .Results.Nemesis.Unavailable}}<p>Not available in this environment:</p><ul>{{range $k, $v := .}}<li>{{$k}}: {{$v}}</li>{{end}}</ul>{{end}}

<h2>Leaders</h2>
{{if .Results.Leaders}}<table id="leaders"><tr><th>from</th><th>leader</th></tr>
{{range .Results.Leaders}}<tr><td>{{printf "%.1f" .TimeS}} s</td><td>{{.Leader}}</td></tr>{{end}}</table>
{{else}}<p>The controller did not see who led: this system does not say who leads, or the run polled no leader.</p>{{end}}

<h2>Files</h2>
<ul id="files">{{range .Files}}<li><a href="{{.Path}}">{{.Path}}</a> <span class="note">{{size .Size}}</span></li>
{{end}}</ul>
</body></html>
`))
