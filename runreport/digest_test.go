package runreport

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
	"chaos/internal/svgplot"
	"chaos/testrun"
	"chaos/testrun/runrecord"
)

// Buckets cover every latency without gaps, in order, each under 1/128
// of its values wide.
func TestBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vs := []time.Duration{0, 1, 127, 128, 129, 255, 256, 257, 1 << 40, 1<<62 + 12345}
	for range 10_000 {
		vs = append(vs, time.Duration(rng.Int64N(int64(time.Hour))))
	}
	for _, v := range vs {
		b := bucketOf(v)
		low, width := bucketRange(b)
		assert.True(t, low <= v && v < low+width, "%d in bucket %d [%d, %d)", v, b, low, low+width)
		assert.LessOrEqual(t, width*128, max(low, 128), "bucket %d is under 1/128 of its values wide", b)
		assert.Equal(t, b+1, bucketOf(low+width), "bucket %d is followed by the next", b)
		if b > 0 {
			assert.Equal(t, b-1, bucketOf(low-1), "bucket %d follows the one before", b)
		}
	}
}

// The quantiles of the histogram are within 1/256 of the exact ones by
// the nearest-rank method; the count and the maximum are exact.
func TestHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 100, 10_000} {
		var h histogram
		var lat []time.Duration
		for range n {
			v := time.Duration(rng.ExpFloat64() * float64(3*time.Millisecond))
			if rng.IntN(20) == 0 {
				v = time.Duration(rng.IntN(200)) // a few of a handful of nanoseconds
			}
			h.add(v)
			lat = append(lat, v)
		}
		slices.Sort(lat)
		for _, q := range []float64{0.5, 0.95, 0.99} {
			exact := lat[min(max(int(q*float64(n)+0.999999)-1, 0), n-1)]
			assert.InDelta(t, float64(exact), float64(h.quantile(q)), float64(exact)/256+0.5, "n=%d q=%v", n, q)
		}
		assert.Equal(t, n, h.n)
		assert.Equal(t, lat[n-1], h.max)
		assert.Equal(t, lat[0], h.min)
	}
	var empty histogram
	assert.Zero(t, empty.quantile(0.5))
}

// A sample keeps every operation up to maxSampled, then every stride-th
// (a power of two), between maxSampled/2 and maxSampled of them.
func TestSampleIsEven(t *testing.T) {
	for _, n := range []int{0, 1, maxSampled, maxSampled + 1, 5*maxSampled + 3} {
		var s sample
		for i := range n {
			s.offer(i%3, time.Duration(i), 0) // start = its ordinal
		}
		stride := max(s.stride, 1)
		assert.Equal(t, (n+stride-1)/stride, len(s.kept), "n=%d", n)
		assert.LessOrEqual(t, len(s.kept), maxSampled)
		if n > maxSampled {
			assert.Greater(t, len(s.kept), maxSampled/2)
		}
		assert.Zero(t, stride&(stride-1), "a power of two")
		for i, k := range s.kept {
			require.Equal(t, time.Duration(i*stride), k.p.start, "n=%d: the i-th kept is the i·stride-th offered", n)
			require.Equal(t, i*stride%3, k.id)
		}
	}
}

// Each column keeps its slowest operation, however often the columns
// doubled, and a column ends under a pixel of the latency chart wide.
func TestSlowestKeepsEachColumnsSlowest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	type op struct{ start, lat time.Duration }
	var ops []op
	var s slowest
	for i := range 50_000 {
		o := op{time.Duration(i) * 997 * time.Microsecond, time.Duration(rng.Int64N(int64(time.Second)))}
		ops = append(ops, o)
		s.add(0, o.start, o.lat)
	}
	span := ops[len(ops)-1].start
	assert.Less(t, svgplot.NewAxis(0, span).PlotWidth()*float64(s.column)/float64(span), 1.0, "a column is under a pixel")
	want := map[int]op{}
	for _, o := range ops {
		c := int(o.start / s.column)
		if w, ok := want[c]; !ok || o.lat > w.lat {
			want[c] = o
		}
	}
	got := s.points(0)
	require.Len(t, got, len(want))
	for _, p := range got {
		w := want[int(p.T/s.column)]
		assert.Equal(t, svgplot.Point{T: w.start, V: ms(w.lat)}, p)
	}
}

// Throughput bins are exact sums of what rates counted, in every bin
// width, before and after it recounts by coarseUnit.
func TestRatesBinExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, span := range []time.Duration{500 * time.Millisecond, 90 * time.Second, 3 * time.Hour, 30 * time.Hour, 100 * time.Hour} {
		var r rates
		var ends []time.Duration
		for range 20_000 {
			ends = append(ends, time.Duration(rng.Int64N(int64(span))))
		}
		slices.Sort(ends)
		for _, e := range ends {
			r.add(e)
		}
		width := binWidth(span)
		n := int(span/width) + 1
		want := make([]int, n)
		for _, e := range ends {
			want[min(int(e/width), n-1)]++
		}
		assert.Equal(t, want, r.binned(width, n), "span %v, bins of %v", span, width)
		assert.Less(t, int(span/width), maxBins)
	}
}

// inFlight pairs each completion with its process's invoke, small process
// numbers and others alike.
func TestInFlight(t *testing.T) {
	var f inFlight
	for _, p := range []history.Process{0, 7, denseProcesses - 1, denseProcesses, 1 << 40} {
		_, ok := f.complete(p)
		assert.False(t, ok, "process %d has nothing in flight", p)
		f.invoke(p, int64(p)+5)
		at, ok := f.complete(p)
		assert.True(t, ok)
		assert.Equal(t, int64(p)+5, at)
		_, ok = f.complete(p)
		assert.False(t, ok, "process %d completed its op", p)
	}
	f.invoke(3, 0)
	at, ok := f.complete(3)
	assert.True(t, ok, "an op invoked at time 0 is in flight")
	assert.Zero(t, at)
}

// The latency chart shows the slowest operation of every column even
// when the sample left it out, and the page says how it thinned.
func TestLatencyChartKeepsSpikes(t *testing.T) {
	var h history.History
	n := 3 * maxSampled
	for i := range n {
		lat := int64(time.Millisecond)
		if i == 2*maxSampled+1 { // an odd ordinal: not in the sample
			lat = int64(5 * time.Second)
		}
		start := int64(i) * int64(100*time.Microsecond)
		h = append(h, history.Op{Time: start, Process: 0, Type: history.Invoke, F: history.FRead},
			history.Op{Time: start + lat, Process: 0, Type: history.OK, F: history.FRead})
	}
	d := digestOf(h)
	series, th := latencySeries(d, d.functions())
	require.Len(t, series, 1)
	assert.Greater(t, th.OKStride, 1)
	spike := svgplot.Point{T: time.Duration(2*maxSampled+1) * 100 * time.Microsecond, V: 5000}
	assert.Contains(t, series[0].Points, spike)
	assert.Contains(t, th.Statement(), "every 4th ok operation (15000 of 60000) and all 0 fail or info operations are drawn")
	assert.Contains(t, th.Statement(), "the slowest operation of each type and outcome invoked in every")
}

// chaos check hands the report the ops it reads (WriteDigested): the page
// is the one Write makes reading history.jsonl itself.
func TestWriteDigestedIsWrite(t *testing.T) {
	dir := copyRun(t, "testdata/run")
	require.NoError(t, Write(dir))
	want, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	d := &Digest{}
	_, _, err = testrun.CheckFile(context.Background(), filepath.Join(dir, "history.jsonl"), testrun.CheckOptions{Observe: d.Add})
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, ReportFile)))
	require.NoError(t, WriteDigested(dir, d))
	got, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Error(t, WriteDigested(dir, nil))
}

// Ops a valid history never holds (a completion without its invoke,
// negative times, a process past the dense ones) are taken without a
// panic, and a Run made without a history renders.
func TestDigestTakesOddOps(t *testing.T) {
	h := history.History{
		{Time: 5, Process: 3, Type: history.OK, F: history.FRead},
		{Time: -9, Process: 4, Type: history.Invoke, F: history.FWrite},
		{Time: -2, Process: 4, Type: history.OK, F: history.FWrite},
		{Time: 1, Process: 1 << 50, Type: history.Invoke, F: history.FRead},
		{Time: 2, Process: 1 << 50, Type: history.Fail, F: history.FRead},
	}
	d := digestOf(h)
	assert.Equal(t, 2, len(d.series))
	page := render(t, smallRun(runrecord.Results{}).WithHistory(h))
	assert.Contains(t, page, "Every operation is drawn (1 ok, 1 fail or info).")
	render(t, Run{Dir: "/store/t/x"})
}
