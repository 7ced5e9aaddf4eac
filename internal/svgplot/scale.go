package svgplot

import (
	"fmt"
	"math"
)

// Scale maps values onto the vertical pixels of a plot area: linear from
// Min to Max, or logarithmic (Log, Min > 0). Values outside are clamped.
type Scale struct {
	Log      bool
	Min, Max float64
	// Label names the axis ("latency", "ops/s"); Format writes a tick
	// value (default: %g).
	Label  string
	Format func(float64) string
}

// LogScale covers [lo, hi] with whole decades; lo and hi must be > 0.
func LogScale(lo, hi float64) Scale {
	lo, hi = math.Max(lo, 1e-12), math.Max(hi, 1e-12)
	if hi < lo {
		lo, hi = hi, lo
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return Scale{Log: true, Min: lo, Max: hi}
}

// LinearScale covers [0, hi], hi rounded up to a tick (1, 2 or 5 times a
// power of ten); at least 1.
func LinearScale(hi float64) Scale {
	hi = math.Max(hi, 1)
	step := niceStep(hi)
	return Scale{Min: 0, Max: math.Ceil(hi/step) * step}
}

// niceStep is the 1, 2 or 5 times a power of ten that cuts [0, hi] into
// at most five parts.
func niceStep(hi float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(hi/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if hi/(m*p) <= 5 {
			return m * p
		}
	}
	return 10 * p
}

// frac is where v sits between Min (0) and Max (1), clamped.
func (s Scale) frac(v float64) float64 {
	var f float64
	if s.Log {
		v = math.Max(v, s.Min)
		f = (math.Log10(v) - math.Log10(s.Min)) / (math.Log10(s.Max) - math.Log10(s.Min))
	} else {
		f = (v - s.Min) / (s.Max - s.Min)
	}
	return math.Min(1, math.Max(0, f))
}

// Ticks are the values labelled on the axis: each decade of a log scale,
// multiples of the nice step of a linear one.
func (s Scale) Ticks() []float64 {
	var ts []float64
	if s.Log {
		for v := s.Min; v <= s.Max*1.0001; v *= 10 {
			ts = append(ts, v)
		}
		return ts
	}
	step := niceStep(s.Max - s.Min)
	for v := s.Min; v <= s.Max+step/1000; v += step {
		ts = append(ts, v)
	}
	return ts
}

// label writes a tick value.
func (s Scale) label(v float64) string {
	if s.Format != nil {
		return s.Format(v)
	}
	return fmt.Sprintf("%g", v)
}
