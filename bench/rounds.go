package bench

import (
	"slices"
)

// Median is one result for several runs of the same benchmark: each
// operation's rate and latencies are their medians over the runs, its
// counts of ok, failed and unknown operations their sums, and a failover
// pools the kills of every run. Runs says how many there were. rs must
// not be empty and must all measure the same operations.
//
// One run on a busy or virtual host can move by ten percent or more; the
// median of a few is what a regression gate or a cost figure should
// quote.
func Median(rs []Result) Result {
	m := rs[0]
	m.Runs = len(rs)
	m.Ops = nil
	for _, s := range rs[0].Ops {
		m.Ops = append(m.Ops, medianOp(s.F, rs))
	}
	var kills []Kill
	for _, r := range rs {
		if r.Failover != nil {
			kills = append(kills, r.Failover.Kills...)
		}
	}
	if rs[0].Failover != nil {
		m.Failover = summarize(kills)
	}
	return m
}

// medianOp is operation f's figures over the runs rs.
func medianOp(f string, rs []Result) OpStats {
	m := OpStats{F: f}
	fig := func(get func(OpStats) float64) float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, get(r.Op(f)))
		}
		return median(v)
	}
	for _, r := range rs {
		s := r.Op(f)
		m.OK += s.OK
		m.Failed += s.Failed
		m.Unknown += s.Unknown
	}
	m.PerSecond = fig(func(s OpStats) float64 { return s.PerSecond })
	m.P50Ms = fig(func(s OpStats) float64 { return s.P50Ms })
	m.P90Ms = fig(func(s OpStats) float64 { return s.P90Ms })
	m.P99Ms = fig(func(s OpStats) float64 { return s.P99Ms })
	m.MaxMs = fig(func(s OpStats) float64 { return s.MaxMs })
	return m
}

// CompareRounds lines up rounds of two benchmarks, round i being as[i]
// and bs[i] run one right after the other: A's and B's figures are their
// medians over the rounds (Median), and each row's ratio is the median of
// the rounds' ratios, with their lowest and highest. A ratio taken within
// a round, then the median over rounds, is steadier than the ratio of two
// medians when the host's speed drifts between rounds. as and bs must
// have the same, non-zero, length.
func CompareRounds(as, bs []Result) Comparison {
	c := Compare(Median(as), Median(bs))
	c.Rounds = len(as)
	ratios := map[string][]float64{}
	for i := range as {
		for _, r := range Compare(as[i], bs[i]).Rows {
			ratios[r.Figure] = append(ratios[r.Figure], r.Ratio)
		}
	}
	for j := range c.Rows {
		r := ratios[c.Rows[j].Figure]
		c.Rows[j].Ratio = median(r)
		if len(r) > 0 {
			c.Rows[j].RatioMin, c.Rows[j].RatioMax = slices.Min(r), slices.Max(r)
		}
	}
	return c
}

// median is the middle of v, or the mean of its two middle values; 0 for
// none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
