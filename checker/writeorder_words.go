package checker

import (
	"fmt"
	"strings"
)

// woKind is the kind of contradiction writeOrder found.
type woKind uint8

const (
	// woNeverWritten: ops[0] observed values[0], which no op wrote.
	woNeverWritten woKind = iota
	// woTwoCas: ops[0] and ops[1], both cas ops that took effect, replaced
	// values[0], which ops[2] wrote.
	woTwoCas
	// woBeforeWrite: ops[0] returned, having observed values[0], before
	// ops[1], its only writer, was invoked.
	woBeforeWrite
	// woChainOrder: ops[0] wrote or observed values[0] and was invoked after
	// ops[1], which had values[1] in effect, returned; yet links, the cas
	// ops from values[0] to values[1], put values[1] after values[0].
	woChainOrder
	// woCasCycle: ops are cas ops each expecting what another wrote, in a
	// cycle no plain write leads into.
	woCasCycle
	// woInitialAfterWrite: ops[0] read nothing and was invoked after ops[1]
	// returned with values[0] in effect.
	woInitialAfterWrite
	// woOverlap: two chains that cannot be ordered. ops[0] (values[0] in
	// effect) returned before ops[1] (values[1]) was invoked, so values[0]'s
	// chain came first; ops[2] (values[2]) returned before ops[3]
	// (values[3]) was invoked, so values[2]'s chain came first.
	woOverlap
)

// woWitness is a contradiction writeOrder found: the ops it names, together
// with the writers of what they observe (closure), cannot be linearized.
type woWitness struct {
	kind    woKind
	ops     []*regOp
	links   []*regOp
	values  []int64
	because map[*regOp]*regOp // see tookEffect
}

// proof says in words why the witness's ops cannot be ordered.
func (w *woWitness) proof() proof {
	ops := w.ops
	var text string
	switch w.kind {
	case woNeverWritten:
		text = fmt.Sprintf("%s, but no operation wrote %d to this key", saw(ops[0]), w.values[0])
	case woTwoCas:
		text = fmt.Sprintf("%s, and %s, but %d was written only once (by %s) and only one operation can replace it",
			saw(ops[0]), saw(ops[1]), w.values[0], ops[2].who())
	case woBeforeWrite:
		text = fmt.Sprintf("%s, but %s, the only operation that writes %d, was invoked only at %s",
			saw(ops[0]), ops[1].who(), w.values[0], seconds(ops[1].call))
	case woChainOrder:
		text = fmt.Sprintf("%s, but %s replaced %d and led to %d, and %s, before that began",
			began(ops[0]), whoAll(w.links), w.values[0], w.values[1], ended(ops[1]))
	case woCasCycle:
		text = fmt.Sprintf("%s each expect a value that another of them wrote, in a cycle no other write leads into, so none of them can be first",
			whoAll(ops))
	case woInitialAfterWrite:
		text = fmt.Sprintf("%s, but %s, before that began, and a key once written is never empty again",
			saw(ops[0]), ended(ops[1]))
	default: // woOverlap
		text = fmt.Sprintf("%d and %d cannot be ordered: %s and %s, so %d was written before %d; yet %s and %s, so %d was written before %d",
			w.values[0], w.values[1], ended(ops[0]), began(ops[1]), w.values[0], w.values[1],
			ended(ops[2]), began(ops[3]), w.values[2], w.values[3])
	}
	named := append(append([]*regOp(nil), ops...), w.links...)
	return proof{text: text, ops: named}
}

// saw says what op observed and when. A cas of unknown outcome that
// writeOrder counts observed what it expected: something saw what it wrote.
func saw(op *regOp) string {
	if op.info && op.kind == regCas {
		return fmt.Sprintf("%s, invoked at %s, took effect (its %d was observed) and so found %d",
			op.who(), seconds(op.call), op.arg2, op.arg)
	}
	return op.observed()
}

// ended says by when op had taken effect.
func ended(op *regOp) string {
	switch {
	case op.info:
		v, _ := op.writes()
		return fmt.Sprintf("%s had taken effect by %s (%d was observed by then)", op.who(), seconds(op.deadline), v)
	case op.kind == regWrite:
		return fmt.Sprintf("%s was acknowledged at %s", op.who(), seconds(op.ret))
	}
	return op.observed()
}

// began says when op was invoked.
func began(op *regOp) string {
	if op.kind == regRead {
		return fmt.Sprintf("process %v's read of %s began at %s", op.process, op.read, seconds(op.call))
	}
	return fmt.Sprintf("%s began at %s", op.who(), seconds(op.call))
}

// whoAll names ops, in order.
func whoAll(ops []*regOp) string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.who()
	}
	return strings.Join(names, ", then ")
}
