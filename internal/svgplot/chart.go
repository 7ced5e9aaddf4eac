package svgplot

import (
	"bytes"
	"fmt"
	"html/template"
	"time"
)

// Span is a stretch of time in a row: a fault, a window, a node's role.
// A span with To == From is an instant and is drawn two pixels wide.
type Span struct {
	From, To time.Duration
	Label    string // drawn inside the span, cut at its edges
	Title    string // shown on hover
	Fill     string // a CSS colour
	Class    string // classes of the span's element, beside "span"
}

// Row is one named row of spans.
type Row struct {
	Name  string
	Class string // classes of the row's element, beside "row"
	Spans []Span
	// Shade: each span also shades the whole height of the plot area, so
	// that what it marks can be seen behind the points and lines.
	Shade bool
}

// Point is a value at a time.
type Point struct {
	T time.Duration
	V float64
}

// Shape is how a point of a series is drawn.
type Shape int

// The shapes, in the order a page hands them out.
const (
	Dot Shape = iota
	Square
	Plus
	Cross
)

// Points is a series drawn as one mark per point.
type Points struct {
	Class, Color string
	Shape        Shape
	Points       []Point
}

// Line is a series drawn as a line through its points, in order.
type Line struct {
	Class, Color string
	Dash         string // an SVG stroke-dasharray, "" for solid
	Points       []Point
}

// Chart is one SVG: rows of spans at the top, then a plot area of Height
// pixels (none when 0) with the scale Y, then the time axis.
type Chart struct {
	ID, Title string // the element's id and its accessible name
	Axis      Axis
	Rows      []Row
	Height    int
	Y         Scale
	Points    []Points
	Lines     []Line
}

// Layout of a chart, in pixels.
const (
	rowHeight = 18
	rowGap    = 2
	topPad    = 4
	plotGap   = 8
	axisRoom  = 22
)

// SVG renders the chart as an inline <svg> element.
func (c Chart) SVG() (template.HTML, error) {
	var b bytes.Buffer
	if err := chartTemplate.Execute(&b, c.view()); err != nil {
		return "", fmt.Errorf("chart %s: %w", c.ID, err)
	}
	return template.HTML(b.String()), nil
}
