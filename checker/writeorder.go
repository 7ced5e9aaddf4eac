package checker

import (
	"cmp"
	"slices"
)

// AlgorithmWriteOrder and AlgorithmSearch name who decided a key, in
// results.json: the write-order argument below, or porcupine's search.
const (
	AlgorithmWriteOrder = "write-order"
	AlgorithmSearch     = "search"
)

// writeOrder decides, in O(n log n), whether the prepared ops of one key are
// linearizable, provided every value is written by at most one op. It
// returns unique=false, deciding nothing, when some value has two writers.
//
// # Why unique values make the question easy
//
// With unique values, an op that observed v (a read returning v, a cas
// expecting v) names the one op that wrote v. Group each value's writer and
// observers into a cluster; in any linearization a cluster is a contiguous
// stretch (the write, then the observations, until the next write), so a
// linearization is an order of clusters, starting with the initial value
// (nil, the cluster of reads that returned nothing). A cas a→b writes b and
// observes a at one point, so b's cluster directly follows a's: clusters
// linked by cas form chains, each starting at a plain write, and a
// linearization is an order of chains.
//
// Intervals are closed (porcupine's convention: at equal times a call comes
// before a return); an op's effect is a point in [call, ret], and ops placed
// in order have non-decreasing points. For a cluster c, let f(c) be the
// earliest return among its ops and s(c) the latest call. Its write's point
// x(c) must be at most f(c) (every op of c is at or after it) and at least
// the write's call; the next cluster's write must be at least s(c) (every
// observation of c is before it). Placing every write as early as possible
// is optimal, so for a chain c1..cm entered when the previous chain's last
// observation allows the next write at T:
//
//	x(c1) = max(T, call(c1's write)), x(ck) = max(T, s(c1), ..., s(c(k-1))),
//
// and it fits exactly when T <= F and the chain is internally consistent:
// call(c1's write) <= f(c1) and max(s(c1..c(k-1))) <= f(ck) for each k. It
// leaves T' = max(T, S), where F and S are the minimum f and maximum s over
// the chain. T starts at s(nil). So chains placed in some order all fit
// exactly when s(nil) <= F(j) for every chain j and, for every chain j, each
// chain i placed before it has S(i) <= F(j). That is an order of a graph
// with an edge j→i (j first) whenever S(i) > F(j), and one exists exactly
// when that graph has no cycle. A cycle has a 2-cycle: take the chain of
// least F in it, m; every S in the cycle exceeds some F >= F(m), so m→i for
// each i of the cycle, and m's predecessor p has S(m) > F(p), so p→m too.
// So the key is linearizable exactly when no two chains i, j have
// S(i) > F(j) and S(j) > F(i): Gibbons and Korach's, and Golab, Li and
// Shah's, "no two forward zones overlap, no backward zone lies inside a
// forward one", extended to cas chains and to ops of unknown outcome.
//
// Of the ops of unknown outcome, those that certainly took effect (see
// tookEffect) count like successful ones whose return is after the end of
// the history; the others are left out. Failed ops never reach here: they did not happen,
// so a value only they wrote counts as never written.
//
// The witness names the operations of the first contradiction found; the
// ops it names together with the writers of what they observe (see
// closure) already form a history that is not linearizable.
func writeOrder(ops []*regOp) (w *woWitness, unique bool) {
	ops, because, unique := tookEffect(ops)
	if !unique {
		return nil, false
	}
	c, w := clustersOf(ops)
	if w != nil {
		w.because = because
		return w, true
	}
	chains, w := c.chains()
	if w == nil {
		w = c.order(chains)
	}
	if w != nil {
		w.because = because
	}
	return w, true
}

// tookEffect returns ops without the writes and cas ops of unknown outcome
// that need not have taken effect, and whether every value has one writer.
// because maps each op of unknown outcome it keeps to an op that observed
// what it wrote and, through because again, ends at a successful op: the
// proof that it took effect.
//
// An op of unknown outcome took effect exactly when a successful op
// observed what it wrote, or a cas that took effect expected it: follow
// the writers back from what successful ops observed. The others are
// observed, if at all, only by each other (an unknown cas can even expect
// the value it writes), and dropping them all keeps the verdict: drop them
// from a linearization, and no op left loses the write it observed
// (closure); put them back, taking no effect, at the end.
func tookEffect(ops []*regOp) (kept []*regOp, because map[*regOp]*regOp, unique bool) {
	writers := make(map[int64]*regOp, len(ops))
	for _, op := range ops {
		if v, ok := op.writes(); ok {
			if writers[v] != nil {
				return nil, nil, false
			}
			writers[v] = op
		}
	}
	because = make(map[*regOp]*regOp)
	var work []*regOp // ops that certainly observed what they expect
	for _, op := range ops {
		if v, ok := op.observes(); ok && v.present {
			work = append(work, op)
		}
	}
	for len(work) > 0 {
		o := work[len(work)-1]
		work = work[:len(work)-1]
		v, _ := observesForOrder(o)
		w := writers[v.v]
		if w == nil || !w.info || because[w] != nil {
			continue
		}
		because[w] = o
		if w.kind == regCas {
			work = append(work, w)
		}
	}
	kept = ops[:0:0]
	for _, op := range ops {
		if !op.info || because[op] != nil {
			kept = append(kept, op)
		}
	}
	return kept, because, true
}

// woCluster is a value, the op that wrote it and the ops that observed it.
type woCluster struct {
	value  regValue
	writer *regOp // nil for the initial value
	// f is the earliest return among writer and observers: the value was in
	// the register by then. s is the latest call: the value was still there,
	// or not yet replaced, at s. fOp and sOp are the ops that set them.
	f, s     int64
	fOp, sOp *regOp
	next     *regOp // the cas that replaced the value, if one did
	chained  bool   // reached from a chain's head
}

// see adds op, which wrote or observed c's value.
//
// On equal returns, an op that completed is preferred to one of unknown
// outcome whose deadline prepare tightened to that return: the completed
// one is why.
func (c *woCluster) see(op *regOp) {
	if c.fOp == nil || op.deadline < c.f || op.deadline == c.f && c.fOp.info && !op.info {
		c.f, c.fOp = op.deadline, op
	}
	if c.sOp == nil || op.call > c.s {
		c.s, c.sOp = op.call, op
	}
}

// woChain is a plain write's cluster and the clusters cas ops built on it.
type woChain struct {
	clusters []*woCluster
	f, s     int64 // the least f and the greatest s of its clusters
	fOp, sOp *regOp
	fAt, sAt *woCluster // the clusters of fOp and sOp
}

// woClusters are the clusters of one key.
type woClusters struct {
	initial *woCluster            // the reads that returned nothing; nil if none
	byValue map[int64]*woCluster  // every written value
	written []*woCluster          // by their writer's invoke
	writers map[int64]*regOp      // value -> its writer
	casOf   map[*regOp]*woCluster // a cas -> the cluster of the value it expects
}

// clustersOf groups ops, whose values are unique, by value. It returns a
// witness for a value observed but never written, or replaced by two cas
// ops.
func clustersOf(ops []*regOp) (*woClusters, *woWitness) {
	c := &woClusters{byValue: make(map[int64]*woCluster), writers: make(map[int64]*regOp),
		casOf: make(map[*regOp]*woCluster)}
	for _, op := range ops {
		if v, ok := op.writes(); ok {
			c.writers[v] = op
			cl := &woCluster{value: regValue{v: v, present: true}, writer: op}
			cl.see(op)
			c.byValue[v] = cl
			c.written = append(c.written, cl)
		}
	}
	for _, op := range ops {
		v, ok := observesForOrder(op)
		if !ok {
			continue
		}
		if !v.present {
			if c.initial == nil {
				c.initial = &woCluster{}
			}
			c.initial.see(op)
			continue
		}
		cl := c.byValue[v.v]
		if cl == nil {
			return nil, &woWitness{kind: woNeverWritten, ops: []*regOp{op}, values: []int64{v.v}}
		}
		cl.see(op)
		if op.kind != regCas {
			continue
		}
		if cl.next != nil {
			return nil, &woWitness{kind: woTwoCas, ops: []*regOp{cl.next, op, cl.writer}, values: []int64{v.v}}
		}
		cl.next = op
		c.casOf[op] = cl
	}
	return c, nil
}

// observesForOrder is what op observed, counting a cas of unknown outcome
// that prepare kept: it took effect (see writeOrder), so it saw the value
// it expected.
func observesForOrder(op *regOp) (regValue, bool) {
	if op.info && op.kind == regCas {
		return regValue{v: op.arg, present: true}, true
	}
	return op.observes()
}

// chains links clusters into chains from each plain write, checking that
// each chain is consistent on its own and that no cas chain is a cycle.
func (c *woClusters) chains() ([]*woChain, *woWitness) {
	var chains []*woChain
	for _, head := range c.written {
		if head.writer.kind == regCas {
			continue
		}
		ch, w := c.chainFrom(head)
		if w != nil {
			return nil, w
		}
		chains = append(chains, ch)
	}
	for _, cl := range c.written {
		if !cl.chained {
			return nil, c.cycleThrough(cl)
		}
	}
	return chains, nil
}

// chainFrom follows the cas ops from head.
func (c *woClusters) chainFrom(head *woCluster) (*woChain, *woWitness) {
	if head.f < head.writer.call {
		return nil, &woWitness{kind: woBeforeWrite, ops: []*regOp{head.fOp, head.writer}, values: []int64{head.value.v}}
	}
	ch := &woChain{f: head.f, fOp: head.fOp, s: head.s, sOp: head.sOp, fAt: head, sAt: head}
	sAt := 0 // the position of ch.sAt
	for cl := head; ; cl = c.byValue[cl.next.arg2] {
		cl.chained = true
		ch.clusters = append(ch.clusters, cl)
		k := len(ch.clusters) - 1
		if k > 0 && ch.s > cl.f {
			var links []*regOp
			for _, l := range ch.clusters[sAt+1:] {
				links = append(links, l.writer)
			}
			return nil, &woWitness{kind: woChainOrder, ops: []*regOp{ch.sOp, cl.fOp}, links: links,
				values: []int64{ch.sAt.value.v, cl.value.v}}
		}
		if cl.f < ch.f {
			ch.f, ch.fOp, ch.fAt = cl.f, cl.fOp, cl
		}
		if cl.s > ch.s {
			ch.s, ch.sOp, ch.sAt, sAt = cl.s, cl.sOp, cl, k
		}
		if cl.next == nil {
			return ch, nil
		}
	}
}

// cycleThrough returns the cycle of cas ops that cl, reached from no plain
// write, hangs from: each expects the value the one before it wrote.
func (c *woClusters) cycleThrough(cl *woCluster) *woWitness {
	seen := make(map[*woCluster]bool)
	for !seen[cl] {
		seen[cl] = true
		cl = c.casOf[cl.writer]
	}
	var ops []*regOp
	for start := cl; ; {
		ops = append(ops, cl.writer)
		if cl = c.casOf[cl.writer]; cl == start {
			break
		}
	}
	slices.SortFunc(ops, byIndex)
	return &woWitness{kind: woCasCycle, ops: ops}
}

// order looks for two chains that cannot be ordered, or a chain that must
// come after a read of the initial value yet took effect before it.
func (c *woClusters) order(chains []*woChain) *woWitness {
	if len(chains) == 0 {
		return nil
	}
	slices.SortFunc(chains, func(a, b *woChain) int {
		return cmp.Or(cmp.Compare(a.f, b.f), cmp.Compare(a.clusters[0].writer.index, b.clusters[0].writer.index))
	})
	if in := c.initial; in != nil && in.s > chains[0].f {
		return &woWitness{kind: woInitialAfterWrite, ops: []*regOp{in.sOp, chains[0].fOp},
			values: []int64{chains[0].fAt.value.v}}
	}
	// top[k] holds the two greatest s among chains[:k], of distinct chains.
	top := make([][2]int, len(chains)+1)
	top[0] = [2]int{-1, -1}
	for k, ch := range chains {
		t := top[k]
		switch {
		case t[0] < 0 || ch.s > chains[t[0]].s:
			t = [2]int{k, t[0]}
		case t[1] < 0 || ch.s > chains[t[1]].s:
			t[1] = k
		}
		top[k+1] = t
	}
	for j, cj := range chains {
		// The chains with f < s(j): those that j's last observation
		// follows once they took effect.
		n, _ := slices.BinarySearchFunc(chains, cj.s, func(ch *woChain, s int64) int {
			return cmp.Compare(ch.f, s)
		})
		for _, i := range top[n] {
			if i >= 0 && i != j && chains[i].s > cj.f {
				ci := chains[i]
				return &woWitness{kind: woOverlap, ops: []*regOp{cj.fOp, ci.sOp, ci.fOp, cj.sOp},
					values: []int64{cj.fAt.value.v, ci.sAt.value.v, ci.fAt.value.v, cj.sAt.value.v}}
			}
		}
	}
	return nil
}

// closure returns the witness's ops with, recursively, the writer of every
// value they observe and, for each op of unknown outcome, the op whose
// observation proves it took effect; in invoke order. If the key is
// linearizable, so is any set closed under writers (drop the other ops from
// a linearization: no op of the set loses the write it observed, and
// nothing new comes between them); and in this one every value the
// witness's argument relies on is observed as before, so the argument
// holds in it: it is not linearizable.
func (w *woWitness) closure(all []*regOp) []*regOp {
	return closeUnder(slices.Concat(w.ops, w.links), all, w.because)
}

// closeUnder returns seeds with, recursively, the writers in all of what
// they observe and the proofs (because) that those of unknown outcome took
// effect, in invoke order.
func closeUnder(seeds, all []*regOp, because map[*regOp]*regOp) []*regOp {
	writers := make(map[int64]*regOp)
	for _, op := range all {
		if v, ok := op.writes(); ok {
			writers[v] = op
		}
	}
	in := make(map[*regOp]bool)
	var out []*regOp
	for work := slices.Clone(seeds); len(work) > 0; {
		op := work[len(work)-1]
		work = work[:len(work)-1]
		if op == nil || in[op] {
			continue
		}
		in[op] = true
		out = append(out, op)
		if v, ok := observesForOrder(op); ok && v.present {
			work = append(work, writers[v.v])
		}
		if op.info {
			work = append(work, because[op])
		}
	}
	slices.SortFunc(out, byIndex)
	return out
}

func byIndex(a, b *regOp) int { return cmp.Compare(a.index, b.index) }
