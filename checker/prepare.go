package checker

// prepare rewrites the operations of one key into a history with the same
// verdict that is cheaper to search, and returns how many ops it dropped.
//
// Operations of unknown outcome are what makes a linearizability search
// explode: each may take effect at any point after its invoke, so every one
// of them multiplies the orders to try. Two rewrites, each proven to keep
// the history linearizable exactly when it was, remove most of them:
//
//  1. Drop an info write or cas whose value no remaining op observes (no
//     successful read returned it, no successful or unknown cas expected
//     it). Proof: given a linearization with the op, remove it. Until the
//     next op that sets the register, the register now holds something
//     else. The ops in that stretch cannot be reads of the value or cas ops
//     expecting it (nothing observes it), and a successful cas expecting
//     anything else could not have succeeded there; so they are unknown cas
//     ops that did nothing. Move those to the very end, where an unknown op
//     may always go and where its effect, if any, changes nothing that
//     follows. Conversely, an op that never took effect is placed at the
//     end. Repeat until no such op is left: dropping an unknown cas may
//     leave the value it expected unobserved.
//  2. An info op that is the only writer of a value some successful op
//     observed certainly took effect, before that observer returned: give
//     it, as its deadline, the earliest return among its observers. Any
//     linearization of the original already orders it before that observer,
//     so it satisfies the tightened interval, and the tightened history's
//     linearizations are linearizations of the original.
//
// The ops are modified in place (deadline); the returned slice holds those
// to search.
func prepare(ops []regOp) (kept []*regOp, dropped int) {
	alive := pruneUnobserved(ops)
	kept = make([]*regOp, 0, len(ops))
	for i := range ops {
		if alive[i] {
			kept = append(kept, &ops[i])
		}
	}
	tightenObserved(kept)
	return kept, len(ops) - len(kept)
}

// pruneUnobserved runs rewrite 1 to a fixpoint and returns which ops stay.
func pruneUnobserved(ops []regOp) []bool {
	observers := make(map[int64]int, len(ops)) // value -> ops observing it
	infoWriters := make(map[int64][]int)       // value -> info ops writing it
	for i := range ops {
		op := &ops[i]
		if v, ok := op.observes(); ok && v.present {
			observers[v.v]++
		}
		if op.info && op.kind == regCas {
			observers[op.arg]++ // an unknown cas depends on the value it expects
		}
		if w, ok := op.writes(); ok && op.info {
			infoWriters[w] = append(infoWriters[w], i)
		}
	}
	alive := make([]bool, len(ops))
	for i := range alive {
		alive[i] = true
	}
	var work []int
	for w, writers := range infoWriters {
		if observers[w] == 0 {
			work = append(work, writers...)
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		if !alive[i] {
			continue
		}
		alive[i] = false
		if op := &ops[i]; op.kind == regCas {
			observers[op.arg]--
			if observers[op.arg] == 0 {
				work = append(work, infoWriters[op.arg]...)
			}
		}
	}
	return alive
}

// tightenObserved runs rewrite 2.
func tightenObserved(ops []*regOp) {
	writers := make(map[int64]int, len(ops))
	firstObserved := make(map[int64]int64, len(ops)) // value -> earliest return of a successful observer
	for _, op := range ops {
		if w, ok := op.writes(); ok {
			writers[w]++
		}
		if v, ok := op.observes(); ok && v.present {
			if t, seen := firstObserved[v.v]; !seen || op.ret < t {
				firstObserved[v.v] = op.ret
			}
		}
	}
	for _, op := range ops {
		w, ok := op.writes()
		if !ok || !op.info || writers[w] != 1 {
			continue
		}
		// An observer that returned before this op was even invoked makes
		// the history non-linearizable; leave that for the search to find.
		if t, seen := firstObserved[w]; seen && t >= op.call && t < op.deadline {
			op.deadline = t
		}
	}
}
