package runreport

import (
	"fmt"
	"strings"

	"chaos/history"
	"chaos/history/faultrec"
	"chaos/internal/svgplot"
)

// otherFill is the colour of the i-th band of a family without a colour
// of its own in the fault records' table (faultrec.Family.Colour): such
// families take a few colours in turn.
func otherFill(i int) string {
	fills := [...]string{"#80cbc4", "#f48fb1", "#c5e1a5", "#fff59d", "#bcaaa4", "#9fa8da"}
	return fills[i%len(fills)]
}

// faultRows are the fault bands: a row per family, in the order the
// families first appear and heals last, each fault a span labelled with
// its targets in words that also shades the plot under it.
func faultRows(fs []Fault) []svgplot.Row {
	var rows []svgplot.Row
	index := map[string]int{}
	var heal *svgplot.Row
	for _, f := range fs {
		if f.IsHeal() {
			if heal == nil {
				heal = &svgplot.Row{Name: history.FHeal, Class: "band heal"}
			}
			heal.Spans = append(heal.Spans, faultSpan(f, faultrec.HealColour))
			continue
		}
		i, ok := index[f.Family]
		if !ok {
			i = len(rows)
			index[f.Family] = i
			rows = append(rows, svgplot.Row{Name: f.Family, Class: "band " + f.Family, Shade: true})
		}
		rows[i].Spans = append(rows[i].Spans, faultSpan(f, fillOf(f.Family, i)))
	}
	if heal != nil {
		rows = append(rows, *heal)
	}
	return rows
}

// fillOf is the colour of family's band, the i-th row.
func fillOf(family string, i int) string {
	if fam, ok := faultrec.Lookup(family); ok && fam.Colour != "" {
		return fam.Colour
	}
	return otherFill(i)
}

// faultSpan is a fault's band span: its targets as the label, and all
// that is known of it on hover.
func faultSpan(f Fault, fill string) svgplot.Span {
	label := f.Targets
	if f.Error != "" {
		label = strings.TrimSpace(label + " (failed)")
	}
	return svgplot.Span{From: f.Start, To: f.End, Label: label, Title: faultTitle(f), Fill: fill, Class: "fault"}
}

// faultTitle is a fault in one line: family, times, targets, mechanism,
// effect and error.
func faultTitle(f Fault) string {
	when := fmt.Sprintf("at %s", at(f.Start))
	switch {
	case f.Open:
		when = fmt.Sprintf("from %s, never ended", at(f.Start))
	case !f.Instant:
		when = fmt.Sprintf("from %s to %s", at(f.Start), at(f.End))
	}
	parts := []string{f.Family + " " + when, f.Targets}
	for _, p := range []struct{ name, v string }{{"by", f.Mechanism}, {"effect", f.Effect}, {"error", f.Error}} {
		if p.v != "" {
			parts = append(parts, p.name+": "+p.v)
		}
	}
	return strings.Join(parts, "; ")
}
