package listappend

import (
	"cmp"
	"fmt"
	"slices"
)

// appended is one appended value of a key and the append that produced
// it.
type appended struct {
	val int64
	w   writer
}

// writer is the append that produced a value: its transaction, and where
// it stands among that transaction's appends to the same key (ord counts
// from 0; final is true for the last one).
type writer struct {
	txn   int32
	ord   int32
	final bool
}

// indexOps flattens the micro-operations, interns keys, records the writer
// of every appended value, and lists the known reads of OK transactions by
// key. A value appended to a key a second time (by any transaction, of any
// outcome) is a duplicate-append anomaly; the first append in history
// order stays its writer.
func (r *run) indexOps() {
	n := len(r.h)
	r.opStart = make([]int32, n+1)
	for t := range r.h {
		r.opStart[t+1] = r.opStart[t] + int32(len(r.h[t].Ops))
	}
	total := r.opStart[n]
	r.opTxn = make([]int32, total)
	r.opKey = make([]int32, total)
	ids := make(map[string]int32)
	var appendsPerKey, readsPerKey []int32
	for t := range r.h {
		for j, op := range r.h[t].Ops {
			f := r.opStart[t] + int32(j)
			r.opTxn[f] = int32(t)
			r.opKey[f] = -1
			if opProblem(op) != "" {
				continue
			}
			k, ok := ids[op.Key]
			if !ok {
				k = int32(len(r.keys))
				ids[op.Key] = k
				r.keys = append(r.keys, op.Key)
				readsPerKey = append(readsPerKey, 0)
				appendsPerKey = append(appendsPerKey, 0)
			}
			r.opKey[f] = k
			if op.F == FAppend {
				appendsPerKey[k]++
			} else if r.usableRead(f) {
				readsPerKey[k]++
			}
		}
	}
	r.indexWriters(appendsPerKey)
	r.indexReads(readsPerKey)
}

// usableRead reports whether flat op f is a well-formed known read of an
// OK transaction: the only reads the analysis trusts.
func (r *run) usableRead(f int32) bool {
	op := r.op(f)
	return r.opKey[f] >= 0 && op.F == FRead && op.Known && r.h[r.opTxn[f]].Type == OK
}

// indexWriters records the writer of every well-formed append, given how
// many each key has: key k's appended values are
// appends[appendStart[k]:appendStart[k+1]], sorted by value, values
// appended more than once in history order. Sorted small runs per key keep
// lookups (writerOf) in cache, where one map of millions of values would
// not be.
func (r *run) indexWriters(perKey []int32) {
	r.appendStart = prefixSums(perKey)
	r.appends = make([]appended, r.appendStart[len(perKey)])
	next := slices.Clone(r.appendStart[:len(perKey)])
	var own []int32 // the current transaction's appends, by key then position
	for t := range r.h {
		own = own[:0]
		for f := r.opStart[t]; f < r.opStart[t+1]; f++ {
			if r.opKey[f] >= 0 && r.op(f).F == FAppend {
				own = append(own, f)
			}
		}
		slices.SortStableFunc(own, func(a, b int32) int { return cmp.Compare(r.opKey[a], r.opKey[b]) })
		ord := int32(0)
		for i, f := range own {
			k := r.opKey[f]
			if i > 0 && r.opKey[own[i-1]] == k {
				ord++
			} else {
				ord = 0
			}
			w := writer{txn: int32(t), ord: ord, final: i+1 == len(own) || r.opKey[own[i+1]] != k}
			r.appends[next[k]] = appended{val: r.op(f).Value, w: w}
			next[k]++
		}
	}
	for k := range perKey {
		r.sortAppends(int32(k))
	}
}

// sortAppends sorts key k's appended values and reports each value
// appended again as a duplicate append; the first append in history order
// stays its writer.
func (r *run) sortAppends(k int32) {
	vals := r.appends[r.appendStart[k]:r.appendStart[k+1]]
	slices.SortStableFunc(vals, func(a, b appended) int { return cmp.Compare(a.val, b.val) })
	start := 0 // the first append of the current value
	for i := 1; i < len(vals); i++ {
		if vals[i].val != vals[start].val {
			start = i
			continue
		}
		first := vals[start]
		a, b, x := r.h[first.w.txn].Index, r.h[vals[i].w.txn].Index, vals[i].val
		r.report(Anomaly{Name: DuplicateAppend, Txns: []int{a, b}, Key: r.keys[k], Value: x,
			Detail: fmt.Sprintf("T%d appended %d to %s, which T%d had already appended; values must be unique per key.", b, x, r.keys[k], a)})
	}
}

// writerOf returns the writer of value x of key k, and false when no
// append produced it.
func (r *run) writerOf(k int32, x int64) (writer, bool) {
	vals := r.appends[r.appendStart[k]:r.appendStart[k+1]]
	i, found := slices.BinarySearchFunc(vals, x, func(a appended, x int64) int { return cmp.Compare(a.val, x) })
	if !found {
		return writer{txn: -1}, false
	}
	return vals[i].w, true
}

// prefixSums returns the start offsets of consecutive runs of the given
// lengths, and their total last.
func prefixSums(counts []int32) []int32 {
	start := make([]int32, len(counts)+1)
	for i, c := range counts {
		start[i+1] = start[i] + c
	}
	return start
}

// indexReads builds the by-key index of usable reads, given how many each
// key has.
func (r *run) indexReads(perKey []int32) {
	r.readStart = prefixSums(perKey)
	r.reads = make([]int32, r.readStart[len(perKey)])
	next := slices.Clone(r.readStart[:len(perKey)])
	for f := range r.opKey {
		k := r.opKey[f]
		if r.usableRead(int32(f)) {
			r.reads[next[k]] = int32(f)
			next[k]++
		}
	}
}
