package runreport

import (
	"time"

	"chaos/internal/svgplot"
)

// throughputBins are the bin widths tried for the throughput chart.
var throughputBins = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute}

// maxBins bounds the points of a throughput line.
const maxBins = 150

// binWidth is the smallest width of throughputBins that cuts span into at
// most maxBins bins.
func binWidth(span time.Duration) time.Duration {
	for _, w := range throughputBins {
		if span/w < maxBins {
			return w
		}
	}
	return span/maxBins + 1
}

// binSpan is how much of the history bin b covers: width, less for the
// last bin, which the end of the history cuts short; at least a quarter
// of width, so that a sliver of a bin makes no spike.
func binSpan(b int, width, span time.Duration) time.Duration {
	from := time.Duration(b) * width
	return max(min(width, span-from), width/4)
}

// dashes tells op functions apart in the throughput chart, in the order
// shapes does in the latency chart.
var dashes = []string{"", "6 3", "2 2", "8 2 2 2"}

// throughputLines are the operations completed per second, in bins of
// width, one line per function and outcome that has operations; each
// point is at its bin's middle. Lines are coloured by outcome and dashed
// by function.
func throughputLines(ops []op, fs []string, span, width time.Duration) ([]svgplot.Line, float64) {
	n := int(span/width) + 1
	counts := map[[2]string][]int{}
	for _, o := range ops {
		k := [2]string{o.F, o.Type.String()}
		if counts[k] == nil {
			counts[k] = make([]int, n)
		}
		counts[k][min(int(o.End/width), n-1)]++
	}
	var lines []svgplot.Line
	peak := 0.0
	for i, f := range fs {
		for _, t := range outcomes {
			c := counts[[2]string{f, t.String()}]
			if c == nil {
				continue
			}
			l := svgplot.Line{Class: "op-" + f + " " + t.String(), Color: outcomeColor[t], Dash: dashes[i%len(dashes)]}
			for b, k := range c {
				rate := float64(k) / binSpan(b, width, span).Seconds()
				peak = max(peak, rate)
				l.Points = append(l.Points, svgplot.Point{T: time.Duration(b)*width + width/2, V: rate})
			}
			lines = append(lines, l)
		}
	}
	return lines, peak
}
