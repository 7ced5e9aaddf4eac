package svgplot

import (
	"math"
	"strconv"
	"strings"
)

// shapePath is, per shape, the line cap and stroke width of its path and
// the path data drawing one mark from its centre.
var shapePath = map[Shape]struct{ cap, width, mark string }{
	Dot:    {"round", "3.5", "h0"},
	Square: {"square", "3", "h0"},
	Plus:   {"butt", "1.3", "m-3 0h6m-3-3v6"},
	Cross:  {"butt", "1.3", "m-2-2l4 4m0-4l-4 4"},
}

// pointsPath draws a series as one path of marks on whole pixels; marks
// on the same pixel are drawn once.
func pointsPath(s Points, a Axis, y func(float64) float64) pathView {
	shape := shapePath[s.Shape]
	seen := make(map[[2]int]bool, len(s.Points))
	var d strings.Builder
	for _, p := range s.Points {
		at := [2]int{int(math.Round(a.X(p.T))), int(math.Round(y(p.V)))}
		if seen[at] {
			continue
		}
		seen[at] = true
		d.WriteByte('M')
		d.WriteString(strconv.Itoa(at[0]))
		d.WriteByte(' ')
		d.WriteString(strconv.Itoa(at[1]))
		d.WriteString(shape.mark)
	}
	return pathView{Class: "points " + s.Class, Color: s.Color, Cap: shape.cap, Width: shape.width, D: d.String()}
}

// linePath draws a series as a polyline.
func linePath(l Line, a Axis, y func(float64) float64) pathView {
	var d strings.Builder
	for i, p := range l.Points {
		if i == 0 {
			d.WriteByte('M')
		} else {
			d.WriteByte('L')
		}
		d.WriteString(px(a.X(p.T)))
		d.WriteByte(' ')
		d.WriteString(px(y(p.V)))
	}
	return pathView{Class: "line " + l.Class, Color: l.Color, Dash: l.Dash, Cap: "round", Width: "1.5", D: d.String()}
}
