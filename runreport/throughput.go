package runreport

import (
	"slices"
	"time"

	"chaos/internal/svgplot"
)

// throughputBins are the bin widths tried for the throughput chart; past
// the last, bins are a multiple of it.
var throughputBins = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute}

// maxBins bounds the points of a throughput line.
const maxBins = 150

// binWidth is the smallest width of throughputBins that cuts span into
// fewer than maxBins bins, else the smallest multiple of the last that
// does.
func binWidth(span time.Duration) time.Duration {
	for _, w := range throughputBins {
		if span/w < maxBins {
			return w
		}
	}
	last := throughputBins[len(throughputBins)-1]
	return (span/maxBins/last + 1) * last
}

// Units rates counts in: a second, and, once an operation completes so
// late that the chart's bins are multiples of coarseUnit (binWidth), that.
const (
	fineUnit   = time.Second
	coarseUnit = 10 * time.Minute
	coarseFrom = maxBins * coarseUnit
)

// rates counts the completions of a series by unit of history time, so
// that the throughput chart's bins, each a whole number of units, are
// exact sums of them.
type rates struct {
	unit   time.Duration // fineUnit or coarseUnit; 0 until the first completion
	counts []uint32      // by unit from 0
}

// add counts a completion at end.
func (r *rates) add(end time.Duration) {
	if r.unit == 0 {
		r.unit = fineUnit
	}
	if end >= coarseFrom && r.unit == fineUnit {
		r.coarsen()
	}
	i := int(end / r.unit)
	if i >= len(r.counts) {
		r.counts = append(r.counts, make([]uint32, i+1-len(r.counts))...)
	}
	r.counts[i]++
}

// coarsen recounts by coarseUnit.
func (r *rates) coarsen() {
	k := int(coarseUnit / fineUnit)
	counts := make([]uint32, (len(r.counts)+k-1)/k)
	for i, c := range r.counts {
		counts[i/k] += c
	}
	r.unit, r.counts = coarseUnit, counts
}

// binned sums the counts into n bins of width, a multiple of the unit.
func (r *rates) binned(width time.Duration, n int) []int {
	out := make([]int, n)
	for i, c := range r.counts {
		out[min(int(time.Duration(i)*r.unit/width), n-1)] += int(c)
	}
	return out
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
// width, one line per series (ss, in the page's order) of the functions
// fs; each point is at its bin's middle. Lines are coloured by outcome and
// dashed by function.
func throughputLines(ss []*series, fs []string, span, width time.Duration) ([]svgplot.Line, float64) {
	n := int(span/width) + 1
	var lines []svgplot.Line
	peak := 0.0
	for _, s := range ss {
		i := slices.Index(fs, s.f)
		l := svgplot.Line{Class: "op-" + s.f + " " + s.typ.String(), Color: outcomeColor[s.typ], Dash: dashes[i%len(dashes)]}
		for b, k := range s.rates.binned(width, n) {
			rate := float64(k) / binSpan(b, width, span).Seconds()
			peak = max(peak, rate)
			l.Points = append(l.Points, svgplot.Point{T: time.Duration(b)*width + width/2, V: rate})
		}
		lines = append(lines, l)
	}
	return lines, peak
}
