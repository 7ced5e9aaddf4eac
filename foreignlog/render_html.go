package foreignlog

import (
	"bytes"
	"html/template"
	"io"
	"time"
)

// htmlPage is the self-contained page HTML writes.
var htmlPage = template.Must(template.New("logs").Funcs(template.FuncMap{
	"offset": func(ns int64) string { return offset(time.Duration(ns)) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaos logs</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em}
pre{background:#f6f6f6;padding:1em;overflow:auto}
table{border-collapse:collapse;font-family:ui-monospace,monospace;font-size:13px}
th,td{border:1px solid #ddd;padding:2px 8px;white-space:nowrap}
th{position:sticky;top:0;background:#fff}
td.leader{background:#9be39b;font-weight:bold}
td.candidate{background:#ffe08a}
td.follower{background:#dbe9ff}
td.down{background:#c8c8c8;color:#700}
.legend span{padding:2px 8px;margin-right:6px}
</style></head><body>
{{range .}}
<h1>{{range .Report.Logs}}{{.Path}} ({{.Format}}) {{end}}</h1>
<pre>{{.Summary}}</pre>
<p class="legend"><span class="leader" style="background:#9be39b">leader</span><span style="background:#ffe08a">candidate</span><span style="background:#dbe9ff">follower</span><span style="background:#c8c8c8">down</span>
</p>
<table><thead><tr><th>time</th><th>line</th>{{range .Report.Facts.Nodes}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{offset .At}}</td><td>{{.Line}}</td>{{range .Cells}}<td class="{{.State}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{end}}
</body></html>
`))

// htmlReport is one report as the page shows it.
type htmlReport struct {
	Report  Report
	Summary string
	Rows    []Row
}

// HTML writes a self-contained page with the summary and the per-node
// timeline of each report, cells coloured by the node's role.
func HTML(w io.Writer, reports []Report) error {
	var data []htmlReport
	for _, r := range reports {
		var b bytes.Buffer
		Summary(&b, r)
		data = append(data, htmlReport{Report: r, Summary: b.String(), Rows: Timeline(r)})
	}
	return htmlPage.Execute(w, data)
}
