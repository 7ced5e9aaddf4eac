package runreport

import (
	"time"

	"chaos/internal/svgplot"
)

// The slowest operations' columns: time is cut into columns from 0, at
// least maxCols/2 of them over the span of the invoke times once that
// span passes maxCols·minColumn. With maxCols/2 over the plot's width in
// pixels, a column is under a pixel wide.
const (
	maxCols   = 2048
	minColumn = time.Microsecond
)

// slowest keeps, for each series and column of invoke time, the slowest
// operation, so that the latency chart shows every spike however thinly
// it samples the rest. A column doubles in width (its neighbours merged)
// whenever an operation falls past maxCols columns: its memory is bounded
// by maxCols per series, however long the history.
type slowest struct {
	column time.Duration // width of a column; 0 until the first op
	cols   [][]opPoint   // by series id, then column; a zero opPoint is an empty column
}

// opPoint is an operation as the latency chart places it. The latency is
// stored plus one, so that the zero opPoint means none.
type opPoint struct {
	start, latPlus1 time.Duration
}

// point is p in the chart's units.
func (p opPoint) point() svgplot.Point { return svgplot.Point{T: p.start, V: ms(p.latPlus1 - 1)} }

// add takes an operation of the series id invoked at start with latency
// lat >= 0.
func (s *slowest) add(id int, start, lat time.Duration) {
	if s.column == 0 {
		s.column = minColumn
	}
	for id >= len(s.cols) {
		s.cols = append(s.cols, make([]opPoint, maxCols))
	}
	col := int(start / s.column)
	for col >= maxCols {
		s.coarsen()
		col /= 2
	}
	if c := &s.cols[id][col]; lat+1 > c.latPlus1 {
		*c = opPoint{start: start, latPlus1: lat + 1}
	}
}

// coarsen doubles the width of a column, merging each pair into its
// slower.
func (s *slowest) coarsen() {
	for _, cols := range s.cols {
		for i := range maxCols / 2 {
			a, b := cols[2*i], cols[2*i+1]
			if b.latPlus1 > a.latPlus1 {
				a = b
			}
			cols[i] = a
		}
		clear(cols[maxCols/2:])
	}
	s.column *= 2
}

// points are the slowest operations of series id, by column.
func (s *slowest) points(id int) []svgplot.Point {
	if id >= len(s.cols) {
		return nil
	}
	var out []svgplot.Point
	for _, p := range s.cols[id] {
		if p.latPlus1 > 0 {
			out = append(out, p.point())
		}
	}
	return out
}
