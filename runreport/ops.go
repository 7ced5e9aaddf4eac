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

// completedOps pairs each client invoke with its completion, in the order
// the completions happened. Operations still open at the end of the
// history have no latency and are left out.
func completedOps(h history.History) []op {
	open := map[history.Process]history.Op{}
	seen := map[string]int{}
	var ops []op
	for _, o := range h {
		if o.Process.IsNemesis() {
			continue
		}
		if o.Type == history.Invoke {
			open[o.Process] = o
			continue
		}
		inv, ok := open[o.Process]
		if !ok {
			continue
		}
		delete(open, o.Process)
		k := o.F + "/" + o.Type.String()
		ops = append(ops, op{F: o.F, Type: o.Type, Start: time.Duration(inv.Time), End: time.Duration(o.Time),
			Latency: time.Duration(o.Time - inv.Time), nthOfType: seen[k]})
		seen[k]++
	}
	return ops
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
