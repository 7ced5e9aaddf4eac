package checker

import (
	"slices"

	"chaos/history"
)

// Counts are outcome counts of client operations. Invoke = OK + Fail + Info:
// an operation still open when the history ended counts as info (its outcome
// is unknown).
type Counts struct {
	Invoke int `json:"invoke"`
	OK     int `json:"ok"`
	Fail   int `json:"fail"`
	Info   int `json:"info"`
}

// add counts one operation that ended in outcome.
func (c *Counts) add(outcome history.Type) {
	c.Invoke++
	switch outcome {
	case history.OK:
		c.OK++
	case history.Fail:
		c.Fail++
	default:
		c.Info++
	}
}

// StatsDetails is what Stats reports beside its verdict.
type StatsDetails struct {
	Counts         Counts            `json:"counts"`
	ByF            map[string]Counts `json:"by_f"`
	Open           int               `json:"open"`    // operations still open at the end (counted as info)
	Nemesis        int               `json:"nemesis"` // nemesis ops
	NeverSucceeded []string          `json:"never_succeeded,omitempty"`
	Reason         string            `json:"reason,omitempty"`
}

// Stats counts outcomes overall and per f. It is invalid when some kind of
// operation never succeeded (the test never exercised it), and unknown when
// the history has no client operation at all.
func Stats(h history.History) Result {
	d := &StatsDetails{ByF: make(map[string]Counts)}
	for _, p := range h.Pairs() {
		outcome := h.Outcome(p)
		if p.Open() {
			d.Open++
		}
		d.Counts.add(outcome)
		f := h[p.Invoke].F
		c := d.ByF[f]
		c.add(outcome)
		d.ByF[f] = c
	}
	d.Nemesis = len(h.Nemesis())
	for f, c := range d.ByF {
		if c.OK == 0 {
			d.NeverSucceeded = append(d.NeverSucceeded, f)
		}
	}
	slices.Sort(d.NeverSucceeded)
	switch {
	case d.Counts.Invoke == 0:
		d.Reason = "no client operations"
		return Result{Valid: Unknown, Details: d}
	case len(d.NeverSucceeded) > 0:
		return Result{Valid: Invalid, Details: d}
	}
	return Result{Valid: Valid, Details: d}
}

// OpCounts counts the outcomes of h's client operations, as results.json's
// "ops" shows them.
func OpCounts(h history.History) Counts {
	var c Counts
	for _, p := range h.Pairs() {
		c.add(h.Outcome(p))
	}
	return c
}
