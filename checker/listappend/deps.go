package listappend

import (
	"cmp"
	"slices"
)

// dependencies emits the ww, wr and rw edges between graph nodes
// (transaction t is node t), key by key. Each is sound for serializability
// because every committed read of a key is a state of one growing list
// whose order the version order gives (see keyVersions):
//
//   - ww: the writer of order[p-1] precedes the writer of order[p].
//   - wr: the writer of a read's last value precedes the reader.
//   - rw: a reader of order[:p] precedes the writer of order[p], the first
//     version it did not see.
//
// A transaction never depends on itself. For a key whose reads are
// incompatible only wr edges are emitted, since wr needs no version order.
func (r *run) dependencies(emit emitFunc) {
	for k := range r.keys {
		v := &r.versions[k]
		if v.compatible {
			for p := 1; p < len(v.order); p++ {
				r.link(emit, v.writers[p-1].txn, v.writers[p].txn, edge{kind: WW, key: int32(k), ref: int32(p)})
			}
		}
		for _, f := range r.reads[r.readStart[k]:r.readStart[k+1]] {
			r.readEdges(emit, int32(k), f)
		}
	}
}

// readEdges emits the wr and rw edges of the read with flat id f of key k.
func (r *run) readEdges(emit emitFunc, k, f int32) {
	v, list, reader := &r.versions[k], r.op(f).List, r.opTxn[f]
	if !v.compatible {
		if len(list) > 0 {
			if w, ok := r.writerOf(k, list[len(list)-1]); ok {
				r.link(emit, w.txn, reader, edge{kind: WR, key: k, ref: f})
			}
		}
		return
	}
	j := len(list)
	if j > len(v.order) {
		return // past a repeated element: no order there
	}
	if j > 0 {
		r.link(emit, v.writers[j-1].txn, reader, edge{kind: WR, key: k, ref: f})
	}
	if j < len(v.order) {
		r.link(emit, reader, v.writers[j].txn, edge{kind: RW, key: k, ref: f})
	}
}

// link emits e from a to b when both are graph nodes and differ. Writers
// of phantom values (-1) are not nodes.
func (r *run) link(emit emitFunc, a, b int32, e edge) {
	if a < 0 || b < 0 || a == b || !r.node[a] || !r.node[b] {
		return
	}
	e.to = b
	emit(a, e)
}

// processOrder returns the graph nodes sorted by process, then invocation
// time, then position: each process's transactions in the order it ran
// them (a process runs one transaction at a time).
func (r *run) processOrder() []int32 {
	var ts []int32
	for t := range r.h {
		if r.node[t] {
			ts = append(ts, int32(t))
		}
	}
	slices.SortFunc(ts, func(a, b int32) int {
		x, y := &r.h[a], &r.h[b]
		return cmp.Or(cmp.Compare(x.Process, y.Process), cmp.Compare(x.Invoke, y.Invoke), cmp.Compare(a, b))
	})
	return ts
}

// processEdges emits a process edge between consecutive transactions of
// one process in order (from processOrder).
func (r *run) processEdges(emit emitFunc, order []int32) {
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		if r.h[a].Process == r.h[b].Process {
			emit(a, edge{to: b, kind: Process, key: -1})
		}
	}
}
