package runreport

import (
	"fmt"
	"time"

	"chaos/history"
	"chaos/internal/svgplot"
)

// Thinning says which operations the latency chart draws: all of them,
// or, past maxSampled of a kind (successful, or failed and unknown), an
// even sample of that kind, and besides the slowest operation of each type
// and outcome in each column of Column, which is under a pixel wide.
type Thinning struct {
	OK, FailInfo             int // operations: successful, and failed or of unknown outcome
	OKStride, FailInfoStride int // every such operation of the kind is in the sample, 1 for all
	OKDrawn, FailInfoDrawn   int // operations in the sample
	Column                   time.Duration
}

// Thinned reports whether some operations are not drawn.
func (t Thinning) Thinned() bool { return t.OKStride > 1 || t.FailInfoStride > 1 }

// Statement is what the page says about the drawing.
func (t Thinning) Statement() string {
	if !t.Thinned() {
		return fmt.Sprintf("Every operation is drawn (%d ok, %d fail or info).", t.OK, t.FailInfo)
	}
	return fmt.Sprintf("Thinned to keep the page small: %s and %s are drawn, and besides, the slowest operation "+
		"of each type and outcome invoked in every %s, so that no spike is lost. "+
		"The quantiles and throughput below count every operation.",
		sampleWords(t.OKStride, t.OKDrawn, t.OK, "ok"), sampleWords(t.FailInfoStride, t.FailInfoDrawn, t.FailInfo, "fail or info"),
		shortDuration(t.Column))
}

// sampleWords says which operations of a kind a sample holds.
func sampleWords(stride, drawn, n int, kind string) string {
	if stride == 1 {
		return fmt.Sprintf("all %d %s operations", n, kind)
	}
	return fmt.Sprintf("every %s %s operation (%d of %d)", ordinal(stride), kind, drawn, n)
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

// shortDuration writes a short duration for a person: "512ns", "64 µs",
// "12 ms", "1.3 s".
func shortDuration(d time.Duration) string {
	if d < 10*time.Microsecond {
		return d.String()
	}
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%d µs", d/time.Microsecond)
	}
	return seconds(d)
}

// shapes hands out point shapes to op functions, in order.
var shapes = []svgplot.Shape{svgplot.Dot, svgplot.Square, svgplot.Plus, svgplot.Cross}

// latencySeries are the points of the latency chart: one series per
// outcome and function, ok first (the rarer fail and info points are
// drawn over it), a point per operation drawn (see Thinning) at its invoke
// time with its latency in milliseconds.
func latencySeries(d *Digest, fs []string) ([]svgplot.Points, Thinning) {
	th := Thinning{OKStride: max(d.ok.stride, 1), FailInfoStride: max(d.other.stride, 1),
		OKDrawn: len(d.ok.kept), FailInfoDrawn: len(d.other.kept), Column: d.slow.column}
	sampled := make([][]svgplot.Point, len(d.series))
	for _, smp := range []*sample{&d.ok, &d.other} {
		for _, k := range smp.kept {
			sampled[k.id] = append(sampled[k.id], k.p.point())
		}
	}
	var out []svgplot.Points
	for _, t := range outcomes {
		for i, f := range fs {
			for _, s := range d.series {
				if s.f != f || s.typ != t {
					continue
				}
				if t == history.OK {
					th.OK += s.lat.n
				} else {
					th.FailInfo += s.lat.n
				}
				points := sampled[s.id]
				if (t == history.OK && th.OKStride > 1) || (t != history.OK && th.FailInfoStride > 1) {
					points = append(points, d.slow.points(s.id)...) // else the sample holds them
				}
				out = append(out, svgplot.Points{Class: "op-" + f + " " + t.String(), Color: outcomeColor[t],
					Shape: shapes[i%len(shapes)], Points: points})
			}
		}
	}
	return out, th
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// latencyScale covers the latencies of every series, in milliseconds.
func latencyScale(ss []*series) svgplot.Scale {
	lo, hi := 1.0, 1.0
	for i, s := range ss {
		mn, mx := max(ms(s.lat.min), 0.001), max(ms(s.lat.max), 0.001)
		if i == 0 || mn < lo {
			lo = mn
		}
		if i == 0 || mx > hi {
			hi = mx
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
