package runreport

import (
	"html/template"
	"io"
	"path/filepath"
	"strings"

	"chaos/internal/atomicfile"
	"chaos/internal/secret"
	"chaos/testrun/runrecord"
)

// ReportFile is the report's name in a run directory.
const ReportFile = "report.html"

// Write renders the report of the run directory dir into dir/report.html,
// replacing it atomically; it reads dir/history.jsonl.
func Write(dir string) error {
	r, err := Load(dir)
	if err != nil {
		return err
	}
	return write(r)
}

// WriteDigested is Write for a history already read: d has taken every
// op of dir/history.jsonl (testrun.CheckOptions.Observe hands them to
// Digest.Add as the check reads them), so the history is not read again.
func WriteDigested(dir string, d *Digest) error {
	r, err := LoadDigested(dir, d)
	if err != nil {
		return err
	}
	return write(r)
}

// write renders the report of r into r.Dir/report.html.
func write(r Run) error {
	return atomicfile.WriteFunc(filepath.Join(r.Dir, ReportFile), 0o644, func(w io.Writer) error {
		return Render(w, r)
	})
}

// page is what the template shows.
type page struct {
	Name, Verdict, VerdictClass string
	Seed                        uint64
	Results                     runrecord.Results
	Test                        *runrecord.TestRecord
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
func Render(w io.Writer, r Run) error {
	p, err := build(r)
	if err != nil {
		return err
	}
	return pageTemplate.Execute(w, p)
}

// build computes the page: the words and tables here, the charts in
// drawCharts.
func build(r Run) (page, error) {
	res := r.Results
	p := page{Name: res.Name, Seed: res.Seed, Results: res, Test: r.Test, Verdict: res.Valid.String(),
		VerdictClass: verdictClass(res.Valid), Checks: checks(res.Checks), Files: r.Files, Notes: r.Notes}
	if p.Name == "" {
		p.Name = filepath.Base(r.Dir)
	}
	if r.Test != nil {
		p.Command = strings.Join(secret.Args(r.Test.Argv), " ")
	}
	for _, f := range r.Files {
		if strings.HasPrefix(f.Path, "linearizable/") && strings.HasSuffix(f.Path, ".html") {
			p.Visualizations = append(p.Visualizations, f.Path)
		}
	}
	d := r.history
	if d == nil { // a Run made by hand, without WithHistory
		d = &Digest{}
		r.history = d
	}
	fs := d.functions()
	p.Quantiles = quantiles(d.ordered())
	p.Faults = faults(d.nemesis, d.end)
	for i, f := range fs {
		p.Functions = append(p.Functions, legendItem{Name: f, Mark: shapeMarks[i%len(shapeMarks)] + " " + dashMarks[i%len(dashMarks)]})
	}
	for _, t := range outcomes {
		p.Outcomes = append(p.Outcomes, legendItem{Name: t.String(), Color: outcomeColor[t]})
	}
	p.Recoveries = recoveryAfter(availabilityOf(res.Checks))
	return p, drawCharts(&p, r, fs)
}
