package listappend

import (
	"fmt"
	"slices"
)

// checkFractured reports fractured-append anomalies on key k: its version
// order shows a transaction's append without, before it, that
// transaction's earlier append to k. In a serial execution a
// transaction's appends to one key take effect together and in order, so
// its n-th append is always directly preceded by its (n-1)-th.
//
// When the earlier append is in the order but not directly before, the
// values between came from other transactions: that is a G0 cycle (or G1a,
// or phantom-value, for values of failed or of no transactions), reported
// as such and not here. longest is the flat id of the read that gave the
// order.
func (r *run) checkFractured(k, longest int32) {
	v := &r.versions[k]
	for p, w := range v.writers {
		if w.txn < 0 || w.ord == 0 || r.h[w.txn].Type == Fail {
			continue
		}
		if p > 0 && v.writers[p-1].txn == w.txn && v.writers[p-1].ord == w.ord-1 {
			continue
		}
		before := r.ownAppend(w.txn, k, w.ord-1)
		if slices.Contains(v.order[:p], before) {
			continue
		}
		ri, wi := r.h[r.opTxn[longest]].Index, r.h[w.txn].Index
		r.report(Anomaly{Name: FracturedAppend, Txns: []int{ri, wi}, Key: r.keys[k], Value: v.order[p],
			Detail: fmt.Sprintf("T%d read %s = %v, which shows T%d's append of %d but not, before it, T%d's earlier append of %d.",
				ri, r.keys[k], r.op(longest).List, wi, v.order[p], wi, before)})
	}
}

// ownAppend returns the value of transaction t's ord-th append (from 0) to
// key k. The caller knows it exists.
func (r *run) ownAppend(t, k, ord int32) int64 {
	n := int32(0)
	for f := r.opStart[t]; f < r.opStart[t+1]; f++ {
		if r.opKey[f] != k || r.op(f).F != FAppend {
			continue
		}
		if n == ord {
			return r.op(f).Value
		}
		n++
	}
	panic(fmt.Sprintf("listappend: transaction %d has no append %d to key %d", t, ord, k))
}
