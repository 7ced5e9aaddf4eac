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
	var b statsBuilder
	for i := range h {
		b.add(&h[i])
	}
	return b.result()
}

// OpCounts counts the outcomes of h's client operations, as results.json's
// "ops" shows them.
func OpCounts(h history.History) Counts {
	var b statsBuilder
	for i := range h {
		b.add(&h[i])
	}
	b.result()
	return b.d.Counts
}

// statsBuilder counts outcomes as a history's ops arrive, in order.
type statsBuilder struct {
	d    StatsDetails
	open map[history.Process]string // process -> f of its op in flight
}

func (b *statsBuilder) add(op *history.Op) {
	switch {
	case op.Process.IsNemesis():
		b.d.Nemesis++
	case op.Type == history.Invoke:
		if b.open == nil {
			b.open = make(map[history.Process]string)
		}
		b.open[op.Process] = op.F
	default:
		if f, ok := b.open[op.Process]; ok {
			b.count(f, op.Type)
			delete(b.open, op.Process)
		}
	}
}

func (b *statsBuilder) count(f string, outcome history.Type) {
	if b.d.ByF == nil {
		b.d.ByF = make(map[string]Counts)
	}
	b.d.Counts.add(outcome)
	c := b.d.ByF[f]
	c.add(outcome)
	b.d.ByF[f] = c
}

// result ends the count (add nothing after it): operations still open
// count as info.
func (b *statsBuilder) result() Result {
	for _, f := range b.open {
		b.d.Open++
		b.count(f, history.Info)
	}
	b.open = nil
	d := &b.d
	if d.ByF == nil {
		d.ByF = make(map[string]Counts)
	}
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
