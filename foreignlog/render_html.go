package foreignlog

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"time"

	"chaos/internal/svgplot"
)

// htmlPage is the self-contained page HTML writes.
var htmlPage = template.Must(template.New("logs").Funcs(template.FuncMap{
	"offset": func(ns int64) string { return offset(time.Duration(ns)) },
	"fill":   func(s State) template.CSS { return template.CSS(StateFill[s]) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos logs</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em}
pre{background:#f6f6f6;padding:1em;overflow:auto}
table{border-collapse:collapse;font-family:ui-monospace,monospace;font-size:13px}
th,td{border:1px solid #ddd;padding:2px 8px;white-space:nowrap}
th{position:sticky;top:0;background:#fff}
td.leader{background:{{fill "leader"}};font-weight:bold}
td.candidate{background:{{fill "candidate"}}}
td.follower{background:{{fill "follower"}}}
td.down{background:{{fill "down"}};color:#700}
.legend span{padding:2px 8px;margin-right:6px}
</style></head><body>
{{range .}}
<h1>{{range .Report.Logs}}{{.Path}} ({{.Format}}) {{end}}</h1>
<pre>{{.Summary}}</pre>
<p class="legend"><span class="leader" style="background:{{fill "leader"}}">leader</span><span style="background:{{fill "candidate"}}">candidate</span><span style="background:{{fill "follower"}}">follower</span><span style="background:{{fill "down"}}">down</span>
</p>
{{.Lanes}}
{{$members := .Report.Facts.Membership}}<table><thead><tr><th>time</th><th>line</th>{{range .Report.Facts.Nodes}}<th>{{.}}</th>{{end}}{{if $members}}<th>members</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{offset .At}}</td><td>{{.Line}}</td>{{range .Cells}}<td class="{{.State}}">{{.Text}}</td>{{end}}{{if $members}}<td>{{.Members}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{end}}
</body></html>
`))

// htmlReport is one report as the page shows it.
type htmlReport struct {
	Report  Report
	Summary string
	Lanes   template.HTML
	Rows    []Row
}

// HTML writes a self-contained page with the summary of each report, its
// per-node timeline drawn over time (TimelineChart) and as a table, cells
// coloured by the node's role, with a members column when the log has
// membership configurations.
func HTML(w io.Writer, reports []Report) error {
	var data []htmlReport
	for i, r := range reports {
		var b bytes.Buffer
		Summary(&b, r)
		lanes, err := TimelineChart(fmt.Sprintf("timeline-%d", i+1), Lanes(r, 0), svgplot.NewAxis(0, r.Facts.Span)).SVG()
		if err != nil {
			return err
		}
		data = append(data, htmlReport{Report: r, Summary: b.String(), Lanes: lanes, Rows: Timeline(r)})
	}
	return htmlPage.Execute(w, data)
}
