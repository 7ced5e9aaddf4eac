package svgplot

import "html/template"

// chartTemplate draws a chartView. Span labels are cut at the span's edges
// by a nested <svg>, which clips what overflows it.
var chartTemplate = template.Must(template.New("chart").Parse(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{{.ID}}" role="img" aria-label="{{.Title}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" font-family="system-ui,sans-serif" font-size="11">
{{- range .Shades}}<rect class="shade" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}" fill-opacity="0.3"/>{{end}}
{{- range .Rows}}
<g class="row {{.Class}}"><text x="{{$.Left}}" dx="-6" y="{{.TextY}}" text-anchor="end" fill="#333">{{.Name}}</text>
{{- range .Spans}}<g class="{{.Class}}"><title>{{.Title}}</title><svg x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><rect width="100%" height="100%" fill="{{.Fill}}"/><text x="3" y="13" fill="#111">{{.Label}}</text></svg></g>{{end}}</g>
{{- end}}
{{- with .Plot}}
<g class="plot"><rect x="{{$.Left}}" y="{{.Top}}" width="{{$.PlotWidth}}" height="{{.Height}}" fill="none" stroke="#bbb"/>
<text transform="translate(14 {{.LabelY}}) rotate(-90)" text-anchor="middle" fill="#333">{{.Label}}</text>
{{- range .YTicks}}<line x1="{{$.Left}}" x2="{{$.Right}}" y1="{{.Pos}}" y2="{{.Pos}}" stroke="#eee"/><text x="{{$.Left}}" dx="-4" y="{{.Pos}}" dy="4" text-anchor="end" fill="#555">{{.Label}}</text>{{end}}
{{- range .Lines}}<path class="{{.Class}}" d="{{.D}}" fill="none" stroke="{{.Color}}" stroke-width="{{.Width}}" stroke-linejoin="round"{{if .Dash}} stroke-dasharray="{{.Dash}}"{{end}}/>{{end}}
{{- range .Points}}<path class="{{.Class}}" d="{{.D}}" fill="none" stroke="{{.Color}}" stroke-width="{{.Width}}" stroke-linecap="{{.Cap}}"/>{{end}}
</g>
{{- end}}
<g class="time-axis"><line x1="{{.Left}}" x2="{{.Right}}" y1="{{.AxisY}}" y2="{{.AxisY}}" stroke="#888"/>
{{- range .Ticks}}<line x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$.AxisY}}" y2="{{$.TickY}}" stroke="#888"/><text x="{{.Pos}}" y="{{$.AxisY}}" dy="14" text-anchor="middle" fill="#555">{{.Label}}</text>{{end}}</g>
</svg>`))
