package runreport

import (
	"html/template"
	"time"

	"chaos/foreignlog"
	"chaos/history/faultrec"
	"chaos/internal/svgplot"
)

// drawCharts draws the page's charts over one time axis, from 0 to the
// end of the history, each with the fault bands: latency, throughput,
// availability and the nodes' lanes.
func drawCharts(p *page, r Run, fs []string) error {
	d := r.history
	end := d.end
	ax := svgplot.NewAxis(0, end)
	bands := faultRows(p.Faults)
	for _, b := range bands {
		p.FaultFamilies = append(p.FaultFamilies, b.Name)
	}
	var err error
	if p.Latency, p.Thinning, err = latencyChart(ax, bands, d, fs); err != nil {
		return err
	}
	width := binWidth(end)
	p.BinWidth = svgplot.TickLabel(width)
	lines, peak := throughputLines(d.ordered(), fs, end, width)
	y := svgplot.LinearScale(peak)
	y.Label = "ops/s"
	if p.Throughput, err = (svgplot.Chart{ID: "throughput", Title: "operations completed per second, by type and outcome",
		Axis: ax, Rows: bands, Height: 200, Y: y, Lines: lines}).SVG(); err != nil {
		return err
	}
	loadStart, exact := r.loadStart()
	rows := availabilityRows(availabilityOf(r.Results.Checks), loadStart, r.Results.Leaders, end)
	if p.Availability, err = (svgplot.Chart{ID: "availability", Title: "availability over time", Axis: ax,
		Rows: append(rows, bands...)}).SVG(); err != nil {
		return err
	}
	p.Timeline, p.TimelineNote, err = timeline(r.Roles, p.Faults, ax, loadStart, exact)
	return err
}

// latencyChart draws every operation's latency over time, with the bands.
func latencyChart(ax svgplot.Axis, bands []svgplot.Row, d *Digest, fs []string) (template.HTML, Thinning, error) {
	series, th := latencySeries(d, fs)
	svg, err := svgplot.Chart{ID: "latency", Title: "latency of every operation over time, log scale", Axis: ax,
		Rows: bands, Height: 280, Y: latencyScale(d.series), Points: series}.SVG()
	return svg, th, err
}

// timeline draws the nodes' roles and terms on ax, and says how the event
// logs' clocks were aligned with the history's. A killed or paused node
// logs nothing, so its lane would go on showing the role it had: the
// history's kills and pauses are drawn over its lane.
func timeline(roles []foreignlog.Event, fs []Fault, ax svgplot.Axis, loadStart time.Time, exact bool) (template.HTML, string, error) {
	if len(roles) == 0 {
		return "", "The run has no event logs (nodes/*/events.jsonl): nothing to draw.", nil
	}
	rep := foreignlog.NewReport(foreignlog.Log{Format: "chaos", Events: roles})
	lanes := foreignlog.Lanes(rep, rep.Facts.Start.Sub(loadStart))
	for _, f := range fs {
		for _, n := range f.Nodes {
			for i := range lanes {
				if lanes[i].Name == n {
					lanes[i].Spans = append(lanes[i].Spans, svgplot.Span{From: f.Start, To: f.End, Label: processState[f.Family],
						Title: faultTitle(f), Fill: foreignlog.StateFill[foreignlog.StateDown], Class: "down " + f.Family})
				}
			}
		}
	}
	svg, err := foreignlog.TimelineChart("node-timeline", lanes, ax).SVG()
	note := "Kills and pauses are drawn from the history over the lanes. " +
		"Node clocks are placed on the history's clock by the load's start time (results.json load_started)."
	if !exact {
		note = "Kills and pauses are drawn from the history over the lanes. " +
			"This run did not record when its load began: node events are placed by the run's start time, " +
			"early by the time setup took, so they may appear later than they happened."
	}
	return svg, note, err
}

// processState labels a node's lane while a process fault holds it.
var processState = map[string]string{faultrec.NameKill: "killed", faultrec.NamePause: "paused"}
