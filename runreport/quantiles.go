package runreport

import "time"

// Quantiles are the latency quantiles of one function and outcome: the
// count and the maximum exact, the others to within 0.4% (histogram).
type Quantiles struct {
	F, Type            string
	Count              int
	P50, P95, P99, Max time.Duration
}

// quantiles are the latency quantiles of every series, in the order
// given.
func quantiles(ss []*series) []Quantiles {
	var out []Quantiles
	for _, s := range ss {
		h := &s.lat
		out = append(out, Quantiles{F: s.f, Type: s.typ.String(), Count: h.n,
			P50: h.quantile(0.50), P95: h.quantile(0.95), P99: h.quantile(0.99), Max: h.max})
	}
	return out
}
