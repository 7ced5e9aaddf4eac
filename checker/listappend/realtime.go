package listappend

import (
	"cmp"
	"slices"
)

// timeline holds the realtime order of graph nodes in sparse form.
//
// Realtime order says T1 precedes T2 when T1 completed before T2 was
// invoked. Stored pairwise it has up to n^2/2 edges; even its transitive
// reduction grows with n times the concurrency. Instead the order goes
// through barrier nodes: sweep all invocations and completions in time
// order; at each invocation that follows at least one completion not yet
// behind a barrier, add a barrier node B, an edge from the previous barrier
// to B, and an edge from each of those completed transactions to B; then
// link the current barrier to the invoked transaction. Barriers form a
// chain, so T1 reaches T2 through barriers exactly when T1's completion
// was swept before T2's invocation, that is when T1.Complete < T2.Invoke
// (at equal times invocations are swept first, as the order is strict).
// That is at most three edges and one barrier per transaction, and every
// path through barriers stands for one realtime edge.
//
// Only OK transactions with a sane completion time complete; others (Info,
// or completing before their invocation) have no completion, i.e. complete
// at +infinity, and only receive realtime edges.
type timeline struct {
	events   []event
	barriers int32
}

// event is one invocation or completion of a graph node.
type event struct {
	at     int64
	txn    int32
	invoke bool
}

// newTimeline sweeps the nodes of r's graph.
func (r *run) newTimeline() *timeline {
	tl := &timeline{}
	for t := range r.h {
		if !r.node[t] {
			continue
		}
		tl.events = append(tl.events, event{at: r.h[t].Invoke, txn: int32(t), invoke: true})
		if completes(&r.h[t]) {
			tl.events = append(tl.events, event{at: r.h[t].Complete, txn: int32(t)})
		}
	}
	slices.SortFunc(tl.events, func(a, b event) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		if a.invoke != b.invoke {
			if a.invoke {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.txn, b.txn)
	})
	tl.sweep(0, func(int32, edge) {})
	return tl
}

// sweep emits the barrier edges, barrier i being node first+i, and sets
// tl.barriers to how many there are.
func (tl *timeline) sweep(first int32, emit emitFunc) {
	current, pending := int32(-1), 0 // pending: completions since the last barrier
	tl.barriers = 0
	for i, ev := range tl.events {
		if !ev.invoke {
			pending++
			continue
		}
		if pending > 0 {
			b := first + tl.barriers
			tl.barriers++
			if current >= 0 {
				emit(current, edge{to: b, kind: barrier, key: -1})
			}
			for _, c := range tl.events[i-pending : i] {
				emit(c.txn, edge{to: b, kind: barrier, key: -1})
			}
			current, pending = b, 0
		}
		if current >= 0 {
			emit(current, edge{to: ev.txn, kind: barrier, key: -1})
		}
	}
}
