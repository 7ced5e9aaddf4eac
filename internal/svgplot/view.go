package svgplot

import (
	"strconv"
	"strings"
)

// chartView is a Chart in pixels, as the template draws it.
type chartView struct {
	ID, Title     string
	Width, Height int
	Left, Right   int // x of the plot area's edges
	Rows          []rowView
	Shades        []spanView
	Plot          *plotView
	Ticks         []tickView
	AxisY         int // y of the time axis line
	TickY         int // y of the tick marks' lower ends
	PlotWidth     int
}

type rowView struct {
	Name, Class string
	Y, TextY    int
	Spans       []spanView
}

type spanView struct {
	X, W        string
	Y, H        int
	Label       string
	Title, Fill string
	Class       string
}

type plotView struct {
	Top, Bottom int
	Height      int
	Label       string
	LabelY      int
	YTicks      []tickView
	Points      []pathView
	Lines       []pathView
}

type pathView struct {
	Class, Color, Dash, Cap string
	Width                   string
	D                       string
}

type tickView struct {
	Pos   string // x of a time tick, y of a value tick
	Label string
}

// px writes a pixel coordinate with one decimal at most.
func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// view lays the chart out.
func (c Chart) view() chartView {
	a := c.Axis
	v := chartView{ID: c.ID, Title: c.Title, Width: a.Width, Left: a.Left, Right: a.Width - a.Right,
		PlotWidth: a.Width - a.Left - a.Right}
	y := topPad
	for _, r := range c.Rows {
		rv := rowView{Name: r.Name, Class: r.Class, Y: y, TextY: y + rowHeight - 5}
		for _, s := range r.Spans {
			sv := c.spanView(s, y, rowHeight)
			rv.Spans = append(rv.Spans, sv)
			if r.Shade {
				v.Shades = append(v.Shades, sv) // y and height set below
			}
		}
		v.Rows = append(v.Rows, rv)
		y += rowHeight + rowGap
	}
	if c.Height > 0 {
		top := y + plotGap
		v.Plot = c.plotView(top, top+c.Height)
		for i := range v.Shades {
			v.Shades[i].Y, v.Shades[i].H = top, c.Height
		}
		y = top + c.Height
	} else {
		v.Shades = nil
	}
	v.AxisY, v.TickY = y, y+4
	for _, t := range a.Ticks() {
		v.Ticks = append(v.Ticks, tickView{Pos: px(a.X(t)), Label: TickLabel(t)})
	}
	v.Height = y + axisRoom
	return v
}

// spanView places a span in a row at y, at least two pixels wide.
func (c Chart) spanView(s Span, y, h int) spanView {
	x0, x1 := c.Axis.X(s.From), c.Axis.X(s.To)
	if x1-x0 < 2 {
		x1 = x0 + 2
	}
	return spanView{X: px(x0), W: px(x1 - x0), Y: y, H: h, Label: s.Label, Title: s.Title, Fill: s.Fill,
		Class: strings.TrimSpace("span " + s.Class)}
}

// plotView lays out the plot area between the pixels top and bottom.
func (c Chart) plotView(top, bottom int) *plotView {
	p := &plotView{Top: top, Bottom: bottom, Height: bottom - top, Label: c.Y.Label, LabelY: (top + bottom) / 2}
	y := func(v float64) float64 { return float64(bottom) - c.Y.frac(v)*float64(bottom-top) }
	for _, t := range c.Y.Ticks() {
		p.YTicks = append(p.YTicks, tickView{Pos: px(y(t)), Label: c.Y.label(t)})
	}
	for _, s := range c.Points {
		p.Points = append(p.Points, pointsPath(s, c.Axis, y))
	}
	for _, l := range c.Lines {
		p.Lines = append(p.Lines, linePath(l, c.Axis, y))
	}
	return p
}
