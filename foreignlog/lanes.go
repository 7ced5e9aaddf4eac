package foreignlog

import (
	"fmt"
	"time"

	"chaos/internal/svgplot"
)

// StateFill is the colour of each timeline state, in the table of `chaos
// logs --html` and in the lanes both it and a run's report draw.
var StateFill = map[State]string{
	StateLeader:    "#9be39b",
	StateCandidate: "#ffe08a",
	StateFollower:  "#dbe9ff",
	StateDown:      "#c8c8c8",
	StateUnknown:   "#ffffff",
}

// lane is the span a node is in while Lanes walks the events.
type lane struct {
	open  bool
	span  svgplot.Span
	state State
}

// Lanes are the per-node rows of r's timeline over time, one per node in
// Facts.Nodes order: a span per stretch in one role and term (labelled as
// the timeline table labels it, "LEADER t3"), down from a crash or a
// stop to the next start, and a new span at every start ("restart" when
// no stop or crash came before it), coloured by StateFill. Spans are at their offset
// from Facts.Start plus shift, so that a caller can put them on its own
// clock; the last span of each node ends at the end of the log.
func Lanes(r Report, shift time.Duration) []svgplot.Row {
	col := map[string]int{}
	lanes := make([]lane, len(r.Facts.Nodes))
	rows := make([]svgplot.Row, len(r.Facts.Nodes))
	for i, n := range r.Facts.Nodes {
		col[n] = i
		rows[i] = svgplot.Row{Name: n, Class: "lane"}
	}
	for _, ev := range r.Events {
		i, ok := col[ev.Node]
		if !ok {
			continue
		}
		text, st := cellFor(ev, lanes[i].state)
		if text == "" || ev.Kind == KindDisconnect || ev.Kind == KindReconnect {
			continue
		}
		l := &lanes[i]
		label := text
		switch {
		case st == StateDown:
			label = "down"
		case ev.Kind == KindStart && l.open && l.state != StateDown:
			label = "restart" // no crash was logged: it was killed
		}
		if l.open && l.span.Label == label && ev.Kind != KindStart {
			continue
		}
		at := ev.Time.Sub(r.Facts.Start) + shift
		if l.open {
			rows[i].Spans = append(rows[i].Spans, closeSpan(ev.Node, l.span, at))
		}
		*l = lane{open: true, state: st, span: svgplot.Span{From: at, Label: label, Fill: StateFill[st], Class: string(st)}}
	}
	for i, l := range lanes {
		if l.open {
			rows[i].Spans = append(rows[i].Spans, closeSpan(r.Facts.Nodes[i], l.span, r.Facts.Span+shift))
		}
	}
	return rows
}

// closeSpan ends s at end and gives it its hover text.
func closeSpan(node string, s svgplot.Span, end time.Duration) svgplot.Span {
	s.To = end
	s.Title = fmt.Sprintf("%s %s from %.3f s to %.3f s", node, s.Label, s.From.Seconds(), s.To.Seconds())
	return s
}

// TimelineChart is the chart of lanes on ax, with the given element id:
// the per-node timeline of `chaos logs --html` and of a run's report.
func TimelineChart(id string, lanes []svgplot.Row, ax svgplot.Axis) svgplot.Chart {
	return svgplot.Chart{ID: id, Title: "role and term of each node over time", Axis: ax, Rows: lanes}
}
