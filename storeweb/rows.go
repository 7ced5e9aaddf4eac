package storeweb

import (
	"html/template"
	"strings"
	"sync"
)

// runRow is a run as a row of the index's table shows it: every value the
// row prints, formatted. The row template "runRow" renders it from these
// fields alone, so equal runRows render equal HTML.
type runRow struct {
	Name, Time, Href, ZipHref string
	Started, Verdict, Broken  string
	Ops, Duration, Faults     string
	HasReport                 bool
}

// newRunRow is r's row.
func newRunRow(r Run) runRow {
	row := runRow{Name: r.Name, Time: r.Time, Href: r.Href(), ZipHref: r.ZipHref(), Started: formatWhen(r.Started),
		Verdict: r.Verdict, Broken: r.Broken, HasReport: r.HasReport}
	if r.Broken == "" {
		row.Ops, row.Duration, row.Faults = formatOps(r.Summary.Ops), formatSecs(r.Summary.DurationS), formatFaults(r.Summary.Faults)
	}
	return row
}

// rowKey is what a row is made from: runs with equal rowKeys have equal
// runRows, and the key is cheaper to make than the row.
type rowKey struct {
	name, time      string
	version         uint64 // of Verdict, Broken and Summary (Run.version)
	verdict, broken string
	started         int64 // Unix nanoseconds
	hasReport       bool
}

// keyOf is r's rowKey.
func keyOf(r Run) rowKey {
	return rowKey{name: r.Name, time: r.Time, version: r.version, verdict: r.Verdict, broken: r.Broken,
		started: r.Started.UnixNano(), hasReport: r.HasReport}
}

// rowCache remembers the HTML of the index's rows, so that an index of
// thousands of runs executes the row template only for the rows that
// changed: a template does each action by reflection, which costs tens of
// microseconds a row, most of a second for a large store. It holds the
// rows of the latest index's runs, shown or not; its methods may be
// called from many goroutines at once.
type rowCache struct {
	mu   sync.Mutex
	html map[rowKey]template.HTML
}

// table is the HTML of the rows of the runs that show says to show, in
// order, rendered with pages' template "runRow" unless remembered. The
// cache then holds the rows of runs (every run of the index) that it held
// or rendered.
func (c *rowCache) table(pages *template.Template, runs []Run, show func(Run) bool) (template.HTML, error) {
	c.mu.Lock()
	old := c.html
	c.mu.Unlock()
	next := make(map[rowKey]template.HTML, len(runs))
	var shown []template.HTML
	size := 0
	for _, r := range runs {
		key, visible := keyOf(r), show(r)
		html, ok := old[key]
		if !ok && visible {
			var b strings.Builder
			if err := pages.ExecuteTemplate(&b, "runRow", newRunRow(r)); err != nil {
				return "", err
			}
			html, ok = template.HTML(b.String()), true
		}
		if ok {
			next[key] = html
		}
		if visible {
			shown, size = append(shown, html), size+len(html)
		}
	}
	c.mu.Lock()
	c.html = next
	c.mu.Unlock()
	var out strings.Builder
	out.Grow(size)
	for _, html := range shown {
		out.WriteString(string(html))
	}
	return template.HTML(out.String()), nil
}
