package runreport

import (
	"fmt"
	"time"

	"chaos/history"
	"chaos/internal/svgplot"
)

// DefaultMaxOKPoints is how many successful operations the latency chart
// draws before it samples them.
const DefaultMaxOKPoints = 20_000

// Thinning says how the latency chart sampled the successful operations.
type Thinning struct {
	OK, Drawn int // successful operations, and how many of them are drawn
	Stride    int // every Stride-th of each type is drawn, 1 for all
	Slow      int // drawn besides, for being slower than their type's p99
	FailInfo  int // fail and info operations, all drawn
}

// Thinned reports whether some successful operations are not drawn.
func (t Thinning) Thinned() bool { return t.Drawn < t.OK }

// Statement is what the page says about the sampling.
func (t Thinning) Statement() string {
	if !t.Thinned() {
		return fmt.Sprintf("Every operation is drawn (%d ok, %d fail or info).", t.OK, t.FailInfo)
	}
	return fmt.Sprintf("Thinned to keep the page small: %d of %d ok operations are drawn (every %s of each type, "+
		"and the %d slower than their type's 99th percentile); all %d fail and info operations are drawn. "+
		"The quantiles and throughput below count every operation.", t.Drawn, t.OK, ordinal(t.Stride), t.Slow, t.FailInfo)
}

// ordinal writes n as "2nd", "3rd", "10th".
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// shapes hands out point shapes to op functions, in order.
var shapes = []svgplot.Shape{svgplot.Dot, svgplot.Square, svgplot.Plus, svgplot.Cross}

// latencySeries are the points of the latency chart: one series per
// outcome and function, ok first, a point per operation at its invoke time with its
// latency in milliseconds; with more than maxOK ok operations, every
// stride-th ok operation of each function is kept, and those slower than
// their function's 99th percentile.
func latencySeries(ops []op, fs []string, p99 map[string]time.Duration, maxOK int) ([]svgplot.Points, Thinning) {
	var th Thinning
	for _, o := range ops {
		if o.Type == history.OK {
			th.OK++
		} else {
			th.FailInfo++
		}
	}
	th.Stride = 1
	if maxOK > 0 && th.OK > maxOK {
		th.Stride = (th.OK + maxOK - 1) / maxOK
	}
	index := map[[2]string]int{}
	var series []svgplot.Points
	for _, t := range outcomes { // ok first: the rarer fail and info points are drawn over it
		for i, f := range fs {
			index[[2]string{f, t.String()}] = len(series)
			series = append(series, svgplot.Points{Class: "op-" + f + " " + t.String(), Color: outcomeColor[t],
				Shape: shapes[i%len(shapes)]})
		}
	}
	for _, o := range ops {
		if o.Type == history.OK && o.nthOfType%th.Stride != 0 {
			if o.Latency <= p99[o.F] {
				continue
			}
			th.Slow++
		}
		if o.Type == history.OK {
			th.Drawn++
		}
		s := &series[index[[2]string{o.F, o.Type.String()}]]
		s.Points = append(s.Points, svgplot.Point{T: o.Start, V: ms(o.Latency)})
	}
	return nonEmpty(series), th
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// nonEmpty drops the series without points.
func nonEmpty(series []svgplot.Points) []svgplot.Points {
	var out []svgplot.Points
	for _, s := range series {
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// latencyScale covers the latencies drawn, in milliseconds.
func latencyScale(series []svgplot.Points) svgplot.Scale {
	lo, hi := 1.0, 1.0
	first := true
	for _, s := range series {
		for _, p := range s.Points {
			v := max(p.V, 0.001)
			if first || v < lo {
				lo = v
			}
			if first || v > hi {
				hi = v
			}
			first = false
		}
	}
	sc := svgplot.LogScale(lo, hi)
	sc.Label, sc.Format = "latency", msLabel
	return sc
}

// msLabel writes a latency tick: "0.1 ms", "10 ms", "1 s".
func msLabel(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%g s", v/1000)
	}
	return fmt.Sprintf("%g ms", v)
}
