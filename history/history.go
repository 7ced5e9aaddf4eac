package history

// History is a sequence of ops in the order they happened: op i has Index i.
type History []Op

// Pair is one client operation: the positions in the history of its invoke
// and of its completion. Complete is -1 when the history ends while the
// operation is still open (the controller stopped before it returned); such
// an operation's outcome is unknown, exactly like info.
type Pair struct {
	Invoke   int
	Complete int
}

// Open reports whether the operation never completed.
func (p Pair) Open() bool { return p.Complete < 0 }

// Outcome returns how the operation ended: OK, Fail or Info, and Info for an
// operation that is still open.
func (h History) Outcome(p Pair) Type {
	if p.Open() {
		return Info
	}
	return h[p.Complete].Type
}

// Pairs matches every client invoke with its completion, in invoke order.
// Nemesis ops are not operations of a client and are left out (see
// [History.Nemesis]). h must be valid (see [Validate]); on an invalid
// history the pairing is undefined.
func (h History) Pairs() []Pair {
	pairs := make([]Pair, 0, len(h)/2+1)
	open := make(map[Process]int) // process -> position in pairs
	for i := range h {
		op := &h[i]
		switch {
		case op.Process.IsNemesis():
		case op.Type == Invoke:
			open[op.Process] = len(pairs)
			pairs = append(pairs, Pair{Invoke: i, Complete: -1})
		default:
			if j, ok := open[op.Process]; ok {
				pairs[j].Complete = i
				delete(open, op.Process)
			}
		}
	}
	return pairs
}

// Nemesis returns the nemesis ops of h, in order.
func (h History) Nemesis() []Op {
	var ops []Op
	for i := range h {
		if h[i].Process.IsNemesis() {
			ops = append(ops, h[i])
		}
	}
	return ops
}
