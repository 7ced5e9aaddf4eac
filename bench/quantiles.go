package bench

import (
	"slices"
	"time"

	"chaos/history"
)

// OpStats are one operation's figures over a benchmark's measured window.
type OpStats struct {
	// F is the operation: read, write, or all of them.
	F string `json:"f"`
	// OK, Failed and Unknown count the operations completed in the window
	// by outcome; latencies and the rate are of the OK ones.
	OK      int `json:"ok"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
	// PerSecond is OK operations per second of the window.
	PerSecond float64 `json:"per_second"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

// opStats computes the figures of the operations of h that completed in
// [from, to) (ns since the start), for read, write and all.
func opStats(h history.History, from, to int64) []OpStats {
	type acc struct {
		lat             []time.Duration
		failed, unknown int
	}
	accs := map[string]*acc{history.FRead: {}, history.FWrite: {}, "all": {}}
	for _, p := range h.Pairs() {
		if p.Open() {
			continue
		}
		inv, op := &h[p.Invoke], &h[p.Complete]
		if op.Time < from || op.Time >= to {
			continue
		}
		for _, a := range []*acc{accs[op.F], accs["all"]} {
			if a == nil {
				continue
			}
			switch op.Type {
			case history.OK:
				a.lat = append(a.lat, time.Duration(op.Time-inv.Time))
			case history.Fail:
				a.failed++
			default:
				a.unknown++
			}
		}
	}
	secs := time.Duration(to - from).Seconds()
	var out []OpStats
	for _, f := range []string{history.FRead, history.FWrite, "all"} {
		a := accs[f]
		if len(a.lat)+a.failed+a.unknown == 0 {
			continue
		}
		slices.Sort(a.lat)
		s := OpStats{F: f, OK: len(a.lat), Failed: a.failed, Unknown: a.unknown}
		if secs > 0 {
			s.PerSecond = float64(len(a.lat)) / secs
		}
		s.P50Ms, s.P90Ms, s.P99Ms = quantile(a.lat, 0.50), quantile(a.lat, 0.90), quantile(a.lat, 0.99)
		if len(a.lat) > 0 {
			s.MaxMs = ms(a.lat[len(a.lat)-1])
		}
		out = append(out, s)
	}
	return out
}

// quantile is the q-quantile of sorted latencies (nearest rank), in ms;
// 0 when there are none.
func quantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return ms(sorted[max(0, min(i, len(sorted)-1))])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
