package runreport

import (
	"html/template"
	"io"
	"path/filepath"
	"strings"
	"time"

	"chaos/atomicfile"
	"chaos/campaign"
	"chaos/foreignlog"
	"chaos/svgplot"
)

// ReportFile is the report's name in a run directory.
const ReportFile = "report.html"

// Options tune a report.
type Options struct {
	// MaxOKPoints: above this many successful operations the latency
	// chart samples them (see Thinning); 0 takes DefaultMaxOKPoints.
	MaxOKPoints int
}

// Write renders the report of the run directory dir into dir/report.html,
// replacing it atomically.
func Write(dir string) error {
	r, err := Load(dir)
	if err != nil {
		return err
	}
	return atomicfile.WriteFunc(filepath.Join(dir, ReportFile), 0o644, func(w io.Writer) error {
		return Render(w, r, Options{})
	})
}

// page is what the template shows.
type page struct {
	Name, Verdict, VerdictClass string
	Seed                        uint64
	Results                     campaign.Results
	Test                        *campaign.TestRecord
	Command                     string
	Checks                      []Check
	Visualizations              []string
	Latency, Throughput         template.HTML
	Availability, Timeline      template.HTML
	Functions                   []legendItem
	Outcomes                    []legendItem
	Thinning                    Thinning
	BinWidth                    string
	Quantiles                   []Quantiles
	Faults                      []Fault
	Recoveries                  map[int64]string // recovery after a fault's end, by the end's history index
	Files                       []File
	Notes                       []string
	TimelineNote                string
	FaultFamilies               []string
}

// legendItem is an entry of a chart's legend.
type legendItem struct{ Name, Mark, Color string }

// shapeMarks and dashMarks show the point shapes and line dashes of the
// functions in the legend, in the order shapes and dashes hand them out.
var (
	shapeMarks = []string{"●", "■", "+", "×"}
	dashMarks  = []string{"——", "– –", "···", "–·–"}
)

// Render writes the report of r.
func Render(w io.Writer, r Run, o Options) error {
	p, err := build(r, o)
	if err != nil {
		return err
	}
	return pageTemplate.Execute(w, p)
}

// build computes the page: the charts over one time axis, from 0 to the
// end of the history.
func build(r Run, o Options) (page, error) {
	if o.MaxOKPoints == 0 {
		o.MaxOKPoints = DefaultMaxOKPoints
	}
	res := r.Results
	p := page{Name: res.Name, Seed: res.Seed, Results: res, Test: r.Test, Verdict: res.Valid.String(),
		VerdictClass: verdictClass(res.Valid), Checks: checks(res.Checks), Files: r.Files, Notes: r.Notes}
	if p.Name == "" {
		p.Name = filepath.Base(r.Dir)
	}
	if r.Test != nil {
		p.Command = strings.Join(r.Test.Argv, " ")
	}
	for _, f := range r.Files {
		if strings.HasPrefix(f.Path, "linearizable/") && strings.HasSuffix(f.Path, ".html") {
			p.Visualizations = append(p.Visualizations, f.Path)
		}
	}
	var end time.Duration
	if n := len(r.History); n > 0 {
		end = time.Duration(r.History[n-1].Time)
	}
	ax := svgplot.NewAxis(0, end)
	ops := completedOps(r.History)
	fs := functions(ops)
	p.Quantiles = quantiles(ops, fs)
	p.Faults = faults(r.History, end)
	bands := faultRows(p.Faults)
	for _, b := range bands {
		p.FaultFamilies = append(p.FaultFamilies, b.Name)
	}
	for i, f := range fs {
		p.Functions = append(p.Functions, legendItem{Name: f, Mark: shapeMarks[i%len(shapeMarks)] + " " + dashMarks[i%len(dashMarks)]})
	}
	for _, t := range outcomes {
		p.Outcomes = append(p.Outcomes, legendItem{Name: t.String(), Color: outcomeColor[t]})
	}
	avail := availabilityOf(res.Checks)
	p.Recoveries = recoveryAfter(avail)
	loadStart, exact := r.loadStart()
	var err error
	if p.Latency, p.Thinning, err = latencyChart(ax, bands, ops, fs, okP99(p.Quantiles), o.MaxOKPoints); err != nil {
		return p, err
	}
	width := binWidth(end)
	p.BinWidth = svgplot.TickLabel(width)
	lines, peak := throughputLines(ops, fs, end, width)
	y := svgplot.LinearScale(peak)
	y.Label = "ops/s"
	if p.Throughput, err = (svgplot.Chart{ID: "throughput", Title: "operations completed per second, by type and outcome",
		Axis: ax, Rows: bands, Height: 200, Y: y, Lines: lines}).SVG(); err != nil {
		return p, err
	}
	if p.Availability, err = (svgplot.Chart{ID: "availability", Title: "availability over time", Axis: ax,
		Rows: append(availabilityRows(avail, loadStart, res.Leaders, end), bands...)}).SVG(); err != nil {
		return p, err
	}
	p.Timeline, p.TimelineNote, err = timeline(r.Roles, p.Faults, ax, loadStart, exact)
	return p, err
}

// latencyChart draws every operation's latency over time, with the bands.
func latencyChart(ax svgplot.Axis, bands []svgplot.Row, ops []op, fs []string, p99 map[string]time.Duration, maxOK int) (template.HTML, Thinning, error) {
	series, th := latencySeries(ops, fs, p99, maxOK)
	svg, err := svgplot.Chart{ID: "latency", Title: "latency of every operation over time, log scale", Axis: ax,
		Rows: bands, Height: 280, Y: latencyScale(series), Points: series}.SVG()
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
var processState = map[string]string{"kill": "killed", "pause": "paused"}
