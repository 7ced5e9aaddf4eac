package svgplot

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAxisMapsTimeOntoThePlotArea(t *testing.T) {
	a := NewAxis(0, 10*time.Second)
	assert.Equal(t, float64(DefaultLeft), a.X(0))
	assert.Equal(t, float64(DefaultWidth-DefaultRight), a.X(10*time.Second))
	assert.Equal(t, float64(DefaultLeft), a.X(-time.Second), "clamped")
	assert.InDelta(t, DefaultLeft+a.PlotWidth()/2, a.X(5*time.Second), 1e-9)
	assert.Equal(t, NewAxis(time.Second, time.Second).To, time.Second+time.Millisecond, "an empty span is widened")
}

func TestTicks(t *testing.T) {
	secs := func(ts []time.Duration) []float64 {
		var out []float64
		for _, t := range ts {
			out = append(out, t.Seconds())
		}
		return out
	}
	assert.Equal(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, secs(NewAxis(0, 9500*time.Millisecond).Ticks()))
	assert.Equal(t, []float64{0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60}, secs(NewAxis(0, 63*time.Second).Ticks()))
	assert.Len(t, NewAxis(0, 65*time.Second).Ticks(), 7, "13 ticks at most: every 10 s")
	assert.Equal(t, []float64{-2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5}, secs(NewAxis(-2500*time.Millisecond, 1500*time.Millisecond).Ticks()))
	assert.Equal(t, "5 s", TickLabel(5*time.Second))
	assert.Equal(t, "0.5 s", TickLabel(500*time.Millisecond))

	assert.Equal(t, []float64{0.1, 1, 10, 100}, roundAll(LogScale(0.3, 42).Ticks()))
	assert.Equal(t, []float64{0, 100, 200, 300, 400, 500}, LinearScale(437).Ticks())
	assert.Equal(t, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, roundAll(LinearScale(0).Ticks()))
}

func roundAll(vs []float64) []float64 {
	for i, v := range vs {
		vs[i] = float64(int(v*1000+0.5)) / 1000
	}
	return vs
}

// A chart has its rows, spans and series as elements a test or a person
// can find, escapes what it is given, and draws points on one pixel once.
func TestChartSVG(t *testing.T) {
	c := Chart{ID: "latency", Title: "latency", Axis: NewAxis(0, 10*time.Second), Height: 100, Y: LogScale(1, 100),
		Rows: []Row{{Name: "kill", Class: "band kill", Shade: true, Spans: []Span{
			{From: time.Second, To: 3 * time.Second, Label: "n1 <killed>", Title: "a & b", Fill: "#f00", Class: "fault"}}}},
		Points: []Points{{Class: "ok", Color: "#00f", Points: []Point{{time.Second, 10}, {time.Second, 10}, {2 * time.Second, 50}}}},
		Lines:  []Line{{Class: "read ok", Color: "#0f0", Points: []Point{{0, 1}, {time.Second, 2}}}},
	}
	svg, err := c.SVG()
	require.NoError(t, err)
	s := string(svg)
	assert.Contains(t, s, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="latency"`)
	assert.Contains(t, s, `<g class="row band kill">`)
	assert.Contains(t, s, `<g class="span fault"><title>a &amp; b</title>`)
	assert.Contains(t, s, `n1 &lt;killed&gt;`)
	assert.Contains(t, s, `<rect class="shade"`)
	assert.Contains(t, s, `class="points ok"`)
	assert.Contains(t, s, `class="line read ok"`)
	d := s[strings.Index(s, `class="points ok" d="`)+len(`class="points ok" d="`):]
	d = d[:strings.IndexByte(d, '"')]
	assert.Equal(t, 2, strings.Count(d, "M"), "two points on one pixel are drawn once: %s", d)
}

// A chart of rows only has no plot area and no shading.
func TestRowsOnlyChart(t *testing.T) {
	svg, err := Chart{ID: "lanes", Axis: NewAxis(0, time.Second),
		Rows: []Row{{Name: "n1", Shade: true, Spans: []Span{{To: time.Second, Label: "LEADER t1"}}}}}.SVG()
	require.NoError(t, err)
	assert.NotContains(t, string(svg), `class="plot"`)
	assert.NotContains(t, string(svg), `class="shade"`)
	assert.Contains(t, string(svg), "LEADER t1")
}
