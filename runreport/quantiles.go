package runreport

import (
	"slices"
	"time"

	"chaos/history"
)

// Quantiles are the latency quantiles of one function and outcome.
type Quantiles struct {
	F, Type            string
	Count              int
	P50, P95, P99, Max time.Duration
}

// quantiles are the latency quantiles of every function and outcome that
// has operations, functions in the order fs, outcomes ok, fail, info.
func quantiles(ops []op, fs []string) []Quantiles {
	lat := map[[2]string][]time.Duration{}
	for _, o := range ops {
		k := [2]string{o.F, o.Type.String()}
		lat[k] = append(lat[k], o.Latency)
	}
	var out []Quantiles
	for _, f := range fs {
		for _, t := range outcomes {
			ls := lat[[2]string{f, t.String()}]
			if len(ls) == 0 {
				continue
			}
			slices.Sort(ls)
			out = append(out, Quantiles{F: f, Type: t.String(), Count: len(ls),
				P50: rank(ls, 0.50), P95: rank(ls, 0.95), P99: rank(ls, 0.99), Max: ls[len(ls)-1]})
		}
	}
	return out
}

// rank is the q-quantile of sorted ls by the nearest-rank method.
func rank(ls []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(ls))+0.999999) - 1
	return ls[min(max(i, 0), len(ls)-1)]
}

// okP99 is each function's 99th percentile of ok latencies.
func okP99(qs []Quantiles) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, q := range qs {
		if q.Type == history.OK.String() {
			out[q.F] = q.P99
		}
	}
	return out
}
