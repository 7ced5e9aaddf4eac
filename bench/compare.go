package bench

// Comparison is two benchmarks of the same settings side by side.
type Comparison struct {
	A    Result `json:"a"`
	B    Result `json:"b"`
	Rows []Row  `json:"rows"`
	// Rounds, when above 1, is how many times both ran, one after the
	// other (CompareRounds): A and B are then medians (Median), and each
	// ratio the median of the rounds' ratios.
	Rounds int `json:"rounds,omitempty"`
}

// Row is one figure of both systems and A's over B's. For a rate, above 1
// means A is faster; for a latency, below 1 means A is faster.
type Row struct {
	Figure string  `json:"figure"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	// Ratio is A / B; 0 when B is 0.
	Ratio float64 `json:"ratio"`
	// RatioMin and RatioMax are the lowest and highest ratio of a
	// round, over several rounds (Comparison.Rounds).
	RatioMin float64 `json:"ratio_min,omitempty"`
	RatioMax float64 `json:"ratio_max,omitempty"`
}

// Compare lines up a's and b's figures: each operation's rate and
// latencies, then the failover's when both measured it.
func Compare(a, b Result) Comparison {
	c := Comparison{A: a, B: b}
	add := func(figure string, x, y float64) {
		r := Row{Figure: figure, A: x, B: y}
		if y != 0 {
			r.Ratio = x / y
		}
		c.Rows = append(c.Rows, r)
	}
	for _, s := range a.Ops {
		t := b.Op(s.F)
		add(s.F+" ops/s", s.PerSecond, t.PerSecond)
		add(s.F+" p50 ms", s.P50Ms, t.P50Ms)
		add(s.F+" p99 ms", s.P99Ms, t.P99Ms)
		add(s.F+" max ms", s.MaxMs, t.MaxMs)
	}
	if a.Failover != nil && b.Failover != nil {
		add("failover p50 ms", a.Failover.P50Ms, b.Failover.P50Ms)
		add("failover max ms", a.Failover.MaxMs, b.Failover.MaxMs)
	}
	return c
}
