package svgplot

import (
	"fmt"
	"math"
	"time"
)

// Axis maps a stretch of time onto the horizontal pixels of a chart. The
// plot area runs from Left to Width-Right; Left also holds row names and
// the y axis labels. Charts drawn with equal Axes line up.
type Axis struct {
	From, To time.Duration
	Width    int
	Left     int
	Right    int
}

// Default layout of NewAxis, in pixels.
const (
	DefaultWidth = 1100
	DefaultLeft  = 150
	DefaultRight = 20
)

// NewAxis returns an axis over [from, to] with the default layout; a span
// shorter than a millisecond is widened to one, so X is always defined.
func NewAxis(from, to time.Duration) Axis {
	if to-from < time.Millisecond {
		to = from + time.Millisecond
	}
	return Axis{From: from, To: to, Width: DefaultWidth, Left: DefaultLeft, Right: DefaultRight}
}

// PlotWidth is the width of the plot area in pixels.
func (a Axis) PlotWidth() float64 { return float64(a.Width - a.Left - a.Right) }

// X is the pixel of time t, clamped to the plot area.
func (a Axis) X(t time.Duration) float64 {
	f := float64(t-a.From) / float64(a.To-a.From)
	return float64(a.Left) + a.PlotWidth()*math.Min(1, math.Max(0, f))
}

// tickSteps are the spacings tried for time ticks, smallest first.
var tickSteps = []time.Duration{
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
}

// maxTicks bounds the number of time ticks of an axis.
const maxTicks = 13

// Ticks are the times of the axis' tick marks: multiples of the smallest
// step from tickSteps giving at most maxTicks of them (of an hour past
// those).
func (a Axis) Ticks() []time.Duration {
	step := time.Hour
	for _, s := range tickSteps {
		if int64(a.To-a.From)/int64(s) < maxTicks {
			step = s
			break
		}
	}
	for int64(a.To-a.From)/int64(step) >= maxTicks {
		step *= 2
	}
	var ts []time.Duration
	first := a.From / step * step
	if first < a.From {
		first += step
	}
	for t := first; t <= a.To; t += step {
		ts = append(ts, t)
	}
	return ts
}

// TickLabel is how a tick reads: seconds, with a decimal only below one.
func TickLabel(t time.Duration) string {
	if t%time.Second == 0 {
		return fmt.Sprintf("%d s", t/time.Second)
	}
	return fmt.Sprintf("%.1f s", t.Seconds())
}
