package listappend

import (
	"fmt"
	"slices"
)

// checkInternal reports internal anomalies: a read of an OK transaction
// that disagrees with the transaction's own operations on the same key.
// In any serial execution a transaction sees its own appends, so a read of
// key k must
//
//   - equal the transaction's previous read of k followed by the values it
//     appended to k since, when there was a previous read;
//   - otherwise end with the values it appended to k so far;
//   - and never hold a value the transaction appends to k only later.
//
// Cost is quadratic in the micro-operations of one transaction, which are
// few (a transaction of thousands is out of this checker's scope).
func (r *run) checkInternal() {
	var suffix []int64
	for t := range r.h {
		if r.h[t].Type != OK {
			continue
		}
		for f := r.opStart[t]; f < r.opStart[t+1]; f++ {
			if !r.usableRead(f) {
				continue
			}
			var prev *MicroOp
			prev, suffix = r.ownHistory(f, suffix[:0])
			if d := r.internalProblem(f, prev, suffix); d != "" {
				r.report(Anomaly{Name: Internal, Txns: []int{r.h[t].Index}, Key: r.op(f).Key, Detail: d})
			}
		}
	}
}

// ownHistory returns, for the read with flat id f, the previous known read
// of its key in its transaction (nil if none) and, appended to suffix, the
// values the transaction appended to the key between that read (or its
// start) and f.
func (r *run) ownHistory(f int32, suffix []int64) (*MicroOp, []int64) {
	t, k := r.opTxn[f], r.opKey[f]
	from := r.opStart[t]
	var prev *MicroOp
	for g := f - 1; g >= r.opStart[t]; g-- {
		if r.opKey[g] == k && r.usableRead(g) {
			prev, from = r.op(g), g+1
			break
		}
	}
	for g := from; g < f; g++ {
		if r.opKey[g] == k && r.op(g).F == FAppend {
			suffix = append(suffix, r.op(g).Value)
		}
	}
	return prev, suffix
}

// internalProblem describes how the read with flat id f breaks the rules
// of checkInternal, given its transaction's previous read of the key and
// the values appended since; "" when it does not.
func (r *run) internalProblem(f int32, prev *MicroOp, suffix []int64) string {
	t := &r.h[r.opTxn[f]]
	op := r.op(f)
	switch {
	case prev != nil && !equalConcat(op.List, prev.List, suffix):
		return fmt.Sprintf("T%d read %s = %v, then appended %v to it, then read %s = %v; that read should have been %v.",
			t.Index, op.Key, prev.List, suffix, op.Key, op.List, slices.Concat(prev.List, suffix))
	case prev == nil && !endsWith(op.List, suffix):
		return fmt.Sprintf("T%d appended %v to %s, then read %s = %v, which does not end with %v.",
			t.Index, suffix, op.Key, op.Key, op.List, suffix)
	}
	for g := f + 1; g < r.opStart[r.opTxn[f]+1]; g++ {
		later := r.op(g)
		if r.opKey[g] == r.opKey[f] && later.F == FAppend && slices.Contains(op.List, later.Value) {
			return fmt.Sprintf("T%d read %s = %v, which already holds %d, a value T%d appends to %s only later.",
				t.Index, op.Key, op.List, later.Value, t.Index, op.Key)
		}
	}
	return ""
}

// equalConcat reports whether list equals a followed by b.
func equalConcat(list, a, b []int64) bool {
	return len(list) == len(a)+len(b) && slices.Equal(list[:len(a)], a) && slices.Equal(list[len(a):], b)
}

// endsWith reports whether list ends with suffix.
func endsWith(list, suffix []int64) bool {
	return len(list) >= len(suffix) && slices.Equal(list[len(list)-len(suffix):], suffix)
}
