package runreport

import (
	"slices"
	"time"

	"chaos/history"
)

// op is one completed client operation: its function, outcome, and when
// it was invoked and completed (history time).
type op struct {
	F         string
	Type      history.Type // ok, fail or info
	Start     time.Duration
	End       time.Duration
	Latency   time.Duration
	nthOfType int // its position among the completed ops of its F and Type, from 0
}

// digest is what the page draws of a history, gathered as its ops arrive
// (history.Scan), so that a long history is never held whole: the
// completed client operations, the nemesis ops and the history's end.
type digest struct {
	// ops pairs each client invoke with its completion, in the order the
	// completions happened. Operations still open at the end of the
	// history have no latency and are left out.
	ops     []op
	nemesis history.History
	end     time.Duration // the time of the last line; 0 for an empty history

	invoked map[history.Process]int64 // process -> invoke time of its open op
	seen    map[string]int            // "f/type" -> completed ops so far
}

// digestOf returns the digest of h.
func digestOf(h history.History) digest {
	var d digest
	for i := range h {
		d.add(&h[i])
	}
	return d
}

// add takes the next op of the history.
func (d *digest) add(o *history.Op) {
	d.end = time.Duration(o.Time)
	switch {
	case o.Process.IsNemesis():
		d.nemesis = append(d.nemesis, *o)
	case o.Type == history.Invoke:
		if d.invoked == nil {
			d.invoked, d.seen = map[history.Process]int64{}, map[string]int{}
		}
		d.invoked[o.Process] = o.Time
	default:
		start, ok := d.invoked[o.Process]
		if !ok {
			return
		}
		delete(d.invoked, o.Process)
		k := o.F + "/" + o.Type.String()
		d.ops = append(d.ops, op{F: o.F, Type: o.Type, Start: time.Duration(start), End: time.Duration(o.Time),
			Latency: time.Duration(o.Time - start), nthOfType: d.seen[k]})
		d.seen[k]++
	}
}

// outcomes are the completion types, in the order the page lists them.
var outcomes = []history.Type{history.OK, history.Fail, history.Info}

// outcomeColor is the colour of each outcome in every chart and legend.
var outcomeColor = map[history.Type]string{
	history.OK:   "#1f77b4",
	history.Fail: "#d62728",
	history.Info: "#ff7f0e",
}

// functions are the op functions of ops, the usual ones first in the
// usual order, then any other in the order it first appears.
func functions(ops []op) []string {
	known := []string{history.FRead, history.FWrite, history.FCAS, history.FAdd}
	present := map[string]bool{}
	var others []string
	for _, o := range ops {
		if !present[o.F] {
			present[o.F] = true
			if !slices.Contains(known, o.F) {
				others = append(others, o.F)
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
