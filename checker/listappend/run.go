package listappend

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// run is the state of one [Check]: the history, what the passes derived
// from it, and the anomalies found so far. Passes are methods that run in
// the order Check calls them; each documents what it needs from the ones
// before it.
type run struct {
	h    []Txn
	opts Options
	out  []Anomaly

	// Flattened micro-operations (writes.go): transaction t's ops are the
	// flat ids opStart[t] up to opStart[t+1]; opTxn maps a flat id back to
	// its transaction, opKey to its interned key (-1 when malformed).
	opStart []int32
	opTxn   []int32
	opKey   []int32
	keys    []string
	// Appended values by key (writes.go): key k's are
	// appends[appendStart[k]:appendStart[k+1]], sorted by value.
	appendStart []int32
	appends     []appended
	// Known reads of OK transactions by key: key k's are the flat ids
	// reads[readStart[k]:readStart[k+1]], in history order.
	readStart []int32
	reads     []int32

	// versions[k] is key k's version order (versions.go).
	versions []keyVersions
	// node[t] says transaction t is in the dependency graph: it committed,
	// or its outcome is unknown and some committed read saw its append.
	node []bool

	undecided []undecided
	stats     Result
}

// undecided is a cycle class a bounded search left undecided in one
// component.
type undecided struct {
	class string
	near  int // the smallest Index in the component
}

// Check checks history h against opts.Model and returns what it found.
//
// The only error is for options it cannot honour: an unknown model, or a
// history of 2^31 transactions or micro-operations or more. Everything wrong
// with the history itself is an anomaly in the Result. Check does not
// modify h, and the same h and opts always give the same Result.
func Check(h []Txn, opts Options) (Result, error) {
	opts, err := opts.resolve()
	if err != nil {
		return Result{Model: opts.Model}, err
	}
	if err := fitsInt32(h); err != nil {
		return Result{Model: opts.Model}, err
	}
	r := &run{h: h, opts: opts}
	r.validate()
	r.indexOps()
	r.checkInternal()
	r.inferVersions()
	r.searchCycles(r.buildGraph())
	return r.result(), nil
}

// fitsInt32 returns an error when h is too large for the int32 ids the
// passes use to keep memory down.
func fitsInt32(h []Txn) error {
	ops := 0
	for i := range h {
		ops += len(h[i].Ops)
	}
	if len(h) >= math.MaxInt32/2 || ops >= math.MaxInt32 {
		return fmt.Errorf("listappend: history of %d transactions and %d micro-operations is too large", len(h), ops)
	}
	return nil
}

// report records an anomaly.
func (r *run) report(a Anomaly) { r.out = append(r.out, a) }

// op returns the micro-operation with flat id f.
func (r *run) op(f int32) *MicroOp {
	t := r.opTxn[f]
	return &r.h[t].Ops[f-r.opStart[t]]
}

// result sorts what was found and decides the verdict: Invalid when some
// anomaly is forbidden by the model, else Unknown when a search left a
// forbidden class undecided, else Valid.
func (r *run) result() Result {
	res := r.stats
	res.Model = r.opts.Model
	res.Txns = len(r.h)
	slices.SortStableFunc(r.out, compareAnomalies)
	res.Anomalies = r.out
	res.Valid = Valid
	for _, a := range r.out {
		if len(res.AnomalyTypes) == 0 || res.AnomalyTypes[len(res.AnomalyTypes)-1] != a.Name {
			res.AnomalyTypes = append(res.AnomalyTypes, a.Name)
		}
		if Forbids(r.opts.Model, a.Name) {
			res.Valid = Invalid
		}
	}
	slices.SortFunc(r.undecided, func(a, b undecided) int {
		return cmp.Or(cmp.Compare(a.near, b.near), strings.Compare(a.class, b.class))
	})
	for _, u := range r.undecided {
		res.Undecided = append(res.Undecided, fmt.Sprintf("%s near T%d", u.class, u.near))
		if res.Valid == Valid && Forbids(r.opts.Model, u.class) {
			res.Valid = Unknown
		}
	}
	return res
}

// compareAnomalies orders anomalies by name, then transactions, then key
// and value, then detail: a total order on what Check reports.
func compareAnomalies(a, b Anomaly) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := slices.Compare(a.Txns, b.Txns); c != 0 {
		return c
	}
	if c := strings.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Value, b.Value), strings.Compare(a.Detail, b.Detail))
}

// buildGraph builds the dependency graph: node t is transaction t (an
// isolated node unless r.node[t]), then come the time barriers when the
// model has realtime order.
func (r *run) buildGraph() *graph {
	n := int32(len(r.h))
	var tl *timeline
	if r.opts.realtime() {
		tl = r.newTimeline()
	}
	var byProcess []int32
	if r.opts.process() {
		byProcess = r.processOrder()
	}
	total := n
	if tl != nil {
		total += tl.barriers
	}
	g := buildGraph(total, func(emit emitFunc) {
		r.dependencies(emit)
		if tl != nil {
			tl.sweep(n, emit)
		}
		r.processEdges(emit, byProcess)
	})
	for _, in := range r.node {
		if in {
			r.stats.Nodes++
		}
	}
	r.stats.Edges = len(g.edges)
	return g
}
