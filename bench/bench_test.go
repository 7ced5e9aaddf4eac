package bench

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/history"
)

// hist builds a history from (process, type, f, time in ms) rows.
func hist(rows ...[4]any) history.History {
	var h history.History
	for i, r := range rows {
		h = append(h, history.Op{Index: int64(i), Process: history.Process(r[0].(int)), Type: r[1].(history.Type),
			F: r[2].(string), Time: int64(r[3].(int)) * int64(time.Millisecond)})
	}
	return h
}

func TestOpStatsCountsTheWindowByOutcome(t *testing.T) {
	h := hist(
		[4]any{0, history.Invoke, history.FWrite, 0}, // completes before the window: left out
		[4]any{0, history.OK, history.FWrite, 5},
		[4]any{-1, history.Invoke, "partition", 6}, // the nemesis is never counted
		[4]any{0, history.Invoke, history.FWrite, 8},
		[4]any{1, history.Invoke, history.FRead, 9},
		[4]any{0, history.OK, history.FWrite, 12}, // 4 ms
		[4]any{1, history.OK, history.FRead, 11},  // 2 ms
		[4]any{0, history.Invoke, history.FWrite, 13},
		[4]any{1, history.Invoke, history.FRead, 14},
		[4]any{0, history.Info, history.FWrite, 20},
		[4]any{1, history.Fail, history.FRead, 21},
		[4]any{2, history.Invoke, history.FRead, 25},
		[4]any{2, history.OK, history.FRead, 40}, // completes after the window: left out
	)
	got := opStats(h, int64(10*time.Millisecond), int64(30*time.Millisecond))
	require.Len(t, got, 3)
	read, write, all := got[0], got[1], got[2]
	require.Equal(t, OpStats{F: history.FRead, OK: 1, Failed: 1, PerSecond: 50, P50Ms: 2, P90Ms: 2, P99Ms: 2, MaxMs: 2}, read)
	require.Equal(t, OpStats{F: history.FWrite, OK: 1, Unknown: 1, PerSecond: 50, P50Ms: 4, P90Ms: 4, P99Ms: 4, MaxMs: 4}, write)
	require.Equal(t, 2, all.OK)
	require.Equal(t, 100.0, all.PerSecond)
	require.Equal(t, 4.0, all.MaxMs)
}

func TestQuantileIsTheNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	require.Equal(t, 50.0, quantile(lat, 0.5))
	require.Equal(t, 90.0, quantile(lat, 0.9))
	require.Equal(t, 99.0, quantile(lat, 0.99))
	require.Equal(t, 0.0, quantile(nil, 0.5))
	require.Equal(t, 7.0, quantile([]time.Duration{7 * time.Millisecond}, 0.99))
}

// The first write invoked at or after the kill and acknowledged is the
// recovery; writes invoked before it, failed ones and reads are not.
func TestAckScannerFindsTheFirstWriteAfterTheKill(t *testing.T) {
	h := hist(
		[4]any{0, history.Invoke, history.FWrite, 90}, // invoked before the kill
		[4]any{1, history.Invoke, history.FWrite, 101},
		[4]any{1, history.Fail, history.FWrite, 150},
		[4]any{2, history.Invoke, history.FRead, 160},
		[4]any{2, history.OK, history.FRead, 170},
		[4]any{0, history.OK, history.FWrite, 300},
	)
	s := &ackScanner{invoked: map[history.Process]int64{}}
	at := int64(100 * time.Millisecond)
	_, ok := s.scan(h, at)
	require.False(t, ok, "no write invoked after the kill was acknowledged yet")
	h = append(h, hist(
		[4]any{1, history.Invoke, history.FWrite, 310},
		[4]any{1, history.OK, history.FWrite, 420},
	)...)
	got, ok := s.scan(h, at)
	require.True(t, ok)
	require.Equal(t, int64(420*time.Millisecond), got)
}

func TestSummarizeFailover(t *testing.T) {
	f := summarize([]Kill{
		{Node: "n1", Recovered: true, RecoveredMs: 250},
		{Node: "n2", Recovered: false},
		{Node: "n3", Recovered: true, RecoveredMs: 120},
		{Node: "n1", Recovered: true, RecoveredMs: 900},
	})
	require.Equal(t, 1, f.Unrecovered)
	require.Equal(t, 250.0, f.P50Ms)
	require.Equal(t, 900.0, f.MaxMs)
}

func TestMixDrawsReadsAtTheRatioAndUniqueWrites(t *testing.T) {
	m, err := NewMix(0.75, 10, 16)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	reads, seen := 0, map[int64]bool{}
	for range 10000 {
		op := m.Next(rng)
		require.Regexp(t, `^b[0-9]$`, op.Key)
		if op.F == history.FRead {
			reads++
			continue
		}
		v := op.Value.(int64)
		require.False(t, seen[v], "value %d twice", v)
		seen[v] = true
		text := op.ValueText(v)
		require.Len(t, text, 16)
		back, err := strconv.ParseInt(text, 10, 64)
		require.NoError(t, err)
		require.Equal(t, v, back)
	}
	require.InDelta(t, 7500, reads, 200)
	_, err = NewMix(1.5, 10, 0)
	require.Error(t, err)
	_, err = NewMix(0.5, 0, 0)
	require.Error(t, err)
}

func TestCompareRatios(t *testing.T) {
	a := Result{System: "chaos-node", Ops: []OpStats{{F: history.FWrite, PerSecond: 9000, P99Ms: 10}},
		Failover: &Failover{P50Ms: 200, MaxMs: 400}}
	b := Result{System: "etcd", Ops: []OpStats{{F: history.FWrite, PerSecond: 3000, P99Ms: 20}},
		Failover: &Failover{P50Ms: 1300, MaxMs: 1500}}
	c := Compare(a, b)
	rows := map[string]Row{}
	for _, r := range c.Rows {
		rows[r.Figure] = r
	}
	require.InDelta(t, 3.0, rows["write ops/s"].Ratio, 1e-9)
	require.InDelta(t, 0.5, rows["write p99 ms"].Ratio, 1e-9)
	require.InDelta(t, 200.0/1300, rows["failover p50 ms"].Ratio, 1e-9)
	require.Equal(t, 0.0, rows["write p50 ms"].Ratio, "0 over 0 is no ratio")
	_, err := json.Marshal(c)
	require.NoError(t, err)
}

func TestValidateRefusesBadOptions(t *testing.T) {
	good := Options{Clients: 64, Duration: time.Second, ReadRatio: 0.5, ValueSize: 16, Keys: 10, RequestTimeout: time.Second}
	require.NoError(t, good.Validate())
	for name, mutate := range map[string]func(*Options){
		"no clients":       func(o *Options) { o.Clients = 0 },
		"no duration":      func(o *Options) { o.Duration = 0 },
		"negative warm-up": func(o *Options) { o.Warmup = -time.Second },
		"ratio above 1":    func(o *Options) { o.ReadRatio = 1.01 },
		"huge values":      func(o *Options) { o.ValueSize = maxValueSize + 1 },
		"no keys":          func(o *Options) { o.Keys = 0 },
		"negative kills":   func(o *Options) { o.Failover = -1 },
		"no timeout":       func(o *Options) { o.RequestTimeout = 0 },
	} {
		o := good
		mutate(&o)
		require.Error(t, o.Validate(), name)
	}
}

// Median takes each figure's median over the runs (the mean of the middle
// two for an even count), sums the counts, and pools failover kills.
func TestMedianOfRuns(t *testing.T) {
	run := func(rate, p99 float64, failed int, kill Kill) Result {
		return Result{System: "chaos-node", Ops: []OpStats{{F: history.FWrite, OK: 10, Failed: failed, PerSecond: rate, P99Ms: p99}},
			Failover: summarize([]Kill{kill})}
	}
	m := Median([]Result{
		run(100, 9, 0, Kill{Node: "n1", Recovered: true, RecoveredMs: 300}),
		run(300, 1, 2, Kill{Node: "n2"}),
		run(200, 5, 1, Kill{Node: "n3", Recovered: true, RecoveredMs: 100}),
	})
	require.Equal(t, 3, m.Runs)
	w := m.Op(history.FWrite)
	require.Equal(t, 200.0, w.PerSecond)
	require.Equal(t, 5.0, w.P99Ms)
	require.Equal(t, 30, w.OK)
	require.Equal(t, 3, w.Failed)
	require.Len(t, m.Failover.Kills, 3)
	require.Equal(t, 1, m.Failover.Unrecovered)
	require.Equal(t, 300.0, m.Failover.MaxMs)
	require.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	require.Equal(t, 0.0, median(nil))
}

// CompareRounds quotes the median of the rounds' own ratios, not the
// ratio of the medians: a host that slows down between rounds moves both
// systems of a round together.
func TestCompareRoundsTakesTheMedianRatioOfRounds(t *testing.T) {
	res := func(rate float64) Result {
		return Result{Ops: []OpStats{{F: history.FWrite, PerSecond: rate}}}
	}
	as := []Result{res(60), res(40), res(160)}
	bs := []Result{res(100), res(50), res(200)}
	c := CompareRounds(as, bs)
	require.Equal(t, 3, c.Rounds)
	r := c.Rows[0]
	require.Equal(t, "write ops/s", r.Figure)
	require.Equal(t, 60.0, r.A)
	require.Equal(t, 100.0, r.B)
	require.InDelta(t, 0.8, r.Ratio, 1e-9, "rounds' ratios 0.6, 0.8, 0.8; the medians' ratio would be 0.6")
	require.InDelta(t, 0.6, r.RatioMin, 1e-9)
	require.InDelta(t, 0.8, r.RatioMax, 1e-9)
}
