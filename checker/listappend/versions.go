package listappend

import (
	"fmt"
	"slices"
)

// keyVersions is what the committed reads of one key say about its
// versions.
//
// In a serializable history every committed read of a key returns a state
// of one growing list, so all reads are prefixes of the longest, and the
// longest lists the key's appends in the order they took effect. order is
// that longest read, cut before its first repeated element (past it no
// order can be trusted); writers[p] is the append that produced order[p]
// (txn -1 when none did). compatible says every read was a prefix of the
// longest: only then are ww and rw edges inferred from order.
type keyVersions struct {
	order      []int64
	writers    []writer
	compatible bool
}

// inferVersions builds every key's version order and reports the
// anomalies one key's reads show without a cycle: incompatible-order,
// duplicate-elements, phantom-value, G1a, G1b and fractured-append. It
// also decides which transactions are graph nodes: every OK one, and every
// Info one whose append some committed read shows (it must have
// committed).
func (r *run) inferVersions() {
	r.versions = make([]keyVersions, len(r.keys))
	r.node = make([]bool, len(r.h))
	for t := range r.h {
		r.node[t] = r.h[t].Type == OK
	}
	for k := range r.keys {
		r.inferKey(int32(k))
	}
}

// inferKey does inferVersions' work for key k.
func (r *run) inferKey(k int32) {
	reads := r.reads[r.readStart[k]:r.readStart[k+1]]
	if len(reads) == 0 {
		return
	}
	longest := reads[0]
	for _, f := range reads {
		if len(r.op(f).List) > len(r.op(longest).List) {
			longest = f
		}
	}
	full := r.op(longest).List
	v := &r.versions[k]
	v.compatible = true
	for _, f := range reads {
		v.compatible = v.compatible && isPrefix(r.op(f).List, full)
	}
	dup := firstDuplicate(full)
	v.order = full
	if dup >= 0 {
		v.order = full[:dup]
	}
	v.writers = make([]writer, len(v.order))
	r.attributeVersions(k, reads, full)
	r.checkFractured(k, longest)
	for _, f := range reads {
		list := r.op(f).List
		switch {
		case !v.compatible && !isPrefix(list, full):
			r.checkStrayRead(k, f, longest)
		case dup >= 0 && len(list) > dup:
			r.reportDuplicateElements(f, list[dup])
		case len(list) > 0:
			r.checkIntermediate(f, v.writers[len(list)-1], list[len(list)-1])
		}
	}
}

// attributeVersions fills the writers of key k's version order, marks the
// Info transactions it shows as nodes, and reports each value in it that
// no append produced (phantom-value) or a failed transaction appended
// (G1a), naming the first read (in history order) that shows it. full is
// the longest read; reads that are not its prefixes are left to
// checkStrayRead.
func (r *run) attributeVersions(k int32, reads []int32, full []int64) {
	v := &r.versions[k]
	seen := 0
	for _, f := range reads {
		list := r.op(f).List
		if len(list) <= seen || !isPrefix(list, full) {
			continue
		}
		for p := seen; p < min(len(list), len(v.order)); p++ {
			v.writers[p] = r.attribute(f, k, list[p])
		}
		seen = len(list)
	}
}

// attribute returns the writer of value x of key k, which the read with
// flat id f shows, marks it a node when its outcome is unknown, and reports
// x when no append produced it or a failed transaction did.
func (r *run) attribute(f, k int32, x int64) writer {
	reader := r.h[r.opTxn[f]].Index
	w, ok := r.writerOf(k, x)
	if !ok {
		r.report(Anomaly{Name: PhantomValue, Txns: []int{reader}, Key: r.keys[k], Value: x,
			Detail: fmt.Sprintf("T%d read %s = %v, holding %d, which no transaction appended to %s.", reader, r.keys[k], r.op(f).List, x, r.keys[k])})
		return writer{txn: -1}
	}
	switch outcome(&r.h[w.txn]) {
	case Fail:
		wi := r.h[w.txn].Index
		r.report(Anomaly{Name: G1a, Txns: []int{reader, wi}, Key: r.keys[k], Value: x,
			Detail: fmt.Sprintf("T%d read %s = %v, holding %d, which T%d appended but T%d failed: an aborted read.", reader, r.keys[k], r.op(f).List, x, wi, wi)})
	case Info:
		r.node[w.txn] = true
	}
	return w
}

// checkIntermediate reports a G1b anomaly when the read with flat id f,
// whose last value x was appended by w, ends in the middle of another
// transaction's appends to the key: in a serial execution nobody else can
// see that state. Failed writers are left to G1a.
func (r *run) checkIntermediate(f int32, w writer, x int64) {
	reader := r.opTxn[f]
	if w.txn < 0 || w.txn == reader || w.final || r.h[w.txn].Type == Fail {
		return
	}
	op, ri, wi := r.op(f), r.h[reader].Index, r.h[w.txn].Index
	r.report(Anomaly{Name: G1b, Txns: []int{ri, wi}, Key: op.Key, Value: x,
		Detail: fmt.Sprintf("T%d read %s = %v, ending with %d, which T%d appended before appending more to %s: an intermediate read.", ri, op.Key, op.List, x, wi, op.Key)})
}

// reportDuplicateElements reports the read with flat id f, which holds x
// twice.
func (r *run) reportDuplicateElements(f int32, x int64) {
	op, ri := r.op(f), r.h[r.opTxn[f]].Index
	r.report(Anomaly{Name: DuplicateElements, Txns: []int{ri}, Key: op.Key, Value: x,
		Detail: fmt.Sprintf("T%d read %s = %v, which holds %d twice.", ri, op.Key, op.List, x)})
}

// checkStrayRead reports the read with flat id f of key k, which is not a
// prefix of the longest read (flat id longest), and checks its values the
// way attributeVersions and checkIntermediate check the version order's.
// Its values found in the longest read were checked there already.
func (r *run) checkStrayRead(k, f, longest int32) {
	op, full := r.op(f), r.op(longest).List
	ri, li := r.h[r.opTxn[f]].Index, r.h[r.opTxn[longest]].Index
	r.report(Anomaly{Name: IncompatibleOrder, Txns: []int{ri, li}, Key: r.keys[k],
		Detail: fmt.Sprintf("T%d read %s = %v and T%d read %s = %v: neither is a prefix of the other, so no one order of appends explains both.", ri, op.Key, op.List, li, op.Key, full)})
	if d := firstDuplicate(op.List); d >= 0 {
		r.reportDuplicateElements(f, op.List[d])
		return
	}
	var last writer
	for _, x := range op.List {
		if slices.Contains(full, x) {
			last, _ = r.writerOf(k, x)
			continue
		}
		last = r.attribute(f, k, x)
	}
	if len(op.List) > 0 {
		r.checkIntermediate(f, last, op.List[len(op.List)-1])
	}
}

// isPrefix reports whether a is a prefix of b.
func isPrefix(a, b []int64) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

// firstDuplicate returns the position of the first element of list equal
// to an earlier one, or -1 when all differ.
func firstDuplicate(list []int64) int {
	if len(list) <= 64 {
		for i := 1; i < len(list); i++ {
			if slices.Contains(list[:i], list[i]) {
				return i
			}
		}
		return -1
	}
	seen := make(map[int64]struct{}, len(list))
	for i, x := range list {
		if _, ok := seen[x]; ok {
			return i
		}
		seen[x] = struct{}{}
	}
	return -1
}
