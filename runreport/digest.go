package runreport

import (
	"slices"
	"time"

	"chaos/history"
)

// Digest is what the page draws of a history, gathered op by op as
// history.Scan hands them over, so that a long history is neither held
// whole nor walked again: for each function and outcome of the completed
// client operations, a latency histogram (the quantiles), their
// completions over time (the throughput) and the slowest in each column
// of the latency chart; a sample of the operations for the latency chart
// (see Thinning); the nemesis ops; and the history's end. Apart from the
// nemesis ops and the operations in flight, its memory is bounded by the
// charts' resolution and the sample's size, not by the number of
// operations. Operations still open at the end of the history have no
// latency and are left out. The zero Digest is an empty history.
type Digest struct {
	series  []*series // in the order they first completed
	ok      sample    // of the successful operations
	other   sample    // of the failed and unknown operations
	slow    slowest
	nemesis history.History
	end     time.Duration // the time of the last op; 0 for an empty history
	invoked inFlight
}

// series gathers the completed operations of one function and outcome.
type series struct {
	f     string
	typ   history.Type
	id    int // its index in Digest.series
	lat   histogram
	rates rates
}

// Add takes the next op of the history. Ops come in the history's order,
// valid (as history.Scan hands them over); Add keeps nothing of o but
// copies (a nemesis op whole).
func (d *Digest) Add(o *history.Op) {
	d.end = time.Duration(o.Time)
	switch {
	case o.Process.IsNemesis():
		d.nemesis = append(d.nemesis, *o)
	case o.Type == history.Invoke:
		d.invoked.invoke(o.Process, o.Time)
	default:
		invoked, ok := d.invoked.complete(o.Process)
		if !ok {
			return
		}
		// Times are never negative in a valid history; clamped, so that
		// no other makes an index negative.
		start, end := time.Duration(max(invoked, 0)), time.Duration(max(o.Time, 0))
		lat := max(end-start, 0)
		s := d.seriesOf(o.F, o.Type)
		s.lat.add(lat)
		s.rates.add(end)
		d.slow.add(s.id, start, lat)
		if o.Type == history.OK {
			d.ok.offer(s.id, start, lat)
		} else {
			d.other.offer(s.id, start, lat)
		}
	}
}

// seriesOf is the series of f and typ, made on its first operation.
func (d *Digest) seriesOf(f string, typ history.Type) *series {
	for _, s := range d.series {
		if s.typ == typ && s.f == f {
			return s
		}
	}
	s := &series{f: f, typ: typ, id: len(d.series)}
	d.series = append(d.series, s)
	return s
}

// digestOf returns the digest of h.
func digestOf(h history.History) *Digest {
	d := &Digest{}
	for i := range h {
		d.Add(&h[i])
	}
	return d
}

// ordered are the digest's series as the page lists them: by function in
// the order of functions, then by outcome in the order of outcomes.
func (d *Digest) ordered() []*series {
	fs := d.functions()
	out := slices.Clone(d.series)
	slices.SortStableFunc(out, func(a, b *series) int {
		if c := slices.Index(fs, a.f) - slices.Index(fs, b.f); c != 0 {
			return c
		}
		return slices.Index(outcomes, a.typ) - slices.Index(outcomes, b.typ)
	})
	return out
}

// outcomes are the completion types, in the order the page lists them.
var outcomes = []history.Type{history.OK, history.Fail, history.Info}

// outcomeColor is the colour of each outcome in every chart and legend.
var outcomeColor = map[history.Type]string{
	history.OK:   "#1f77b4",
	history.Fail: "#d62728",
	history.Info: "#ff7f0e",
}

// functions are the op functions of the completed operations, the usual
// ones first in the usual order, then any other in the order it first
// completed.
func (d *Digest) functions() []string {
	known := []string{history.FRead, history.FWrite, history.FCAS, history.FAdd}
	present := map[string]bool{}
	var others []string
	for _, s := range d.series {
		if !present[s.f] {
			present[s.f] = true
			if !slices.Contains(known, s.f) {
				others = append(others, s.f)
			}
		}
	}
	var fs []string
	for _, f := range known {
		if present[f] {
			fs = append(fs, f)
		}
	}
	return append(fs, others...)
}
