package listappend

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// pattern returns the smallest history showing the anomaly name over the
// keys x and y (each transaction given by outcome and micro-operations
// only), and false for a name it does not know.
func pattern(name, x, y string) ([]Txn, bool) {
	switch name {
	case G0:
		return txnsOf(
			Txn{Type: OK, Ops: []MicroOp{AppendOp(x, 1), AppendOp(y, 1)}},
			Txn{Type: OK, Ops: []MicroOp{AppendOp(x, 2), AppendOp(y, 2)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x, 1, 2), ReadOp(y, 2, 1)}}), true
	case G1a:
		return txnsOf(
			Txn{Type: Fail, Ops: []MicroOp{AppendOp(x, 1)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x, 1)}}), true
	case G1b:
		return txnsOf(
			Txn{Type: OK, Ops: []MicroOp{AppendOp(x, 1), AppendOp(x, 2)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x, 1)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x, 1, 2)}}), true
	case G1c:
		return txnsOf(
			Txn{Type: OK, Ops: []MicroOp{AppendOp(x, 1), ReadOp(y, 1)}},
			Txn{Type: OK, Ops: []MicroOp{AppendOp(y, 1), ReadOp(x, 1)}}), true
	case GSingle:
		return txnsOf(
			Txn{Type: OK, Ops: []MicroOp{AppendOp(x, 1), AppendOp(y, 1)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x, 1), ReadOp(y)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(y, 1)}}), true
	case G2Item:
		return txnsOf(
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x), ReadOp(y), AppendOp(x, 1)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x), ReadOp(y), AppendOp(y, 1)}},
			Txn{Type: OK, Ops: []MicroOp{ReadOp(x, 1), ReadOp(y, 1)}}), true
	default:
		return nil, false
	}
}

// txnsOf returns ts; it only makes patterns read as lists.
func txnsOf(ts ...Txn) []Txn { return ts }

// PlantableAnomalies returns the names Plant accepts, sorted.
func PlantableAnomalies() []string {
	return []string{G0, G1a, G1b, G1c, GSingle, G2Item}
}

// Plant returns a copy of h with the anomaly named name added: a few
// transactions over two fresh keys (named after len(h), so plants into one
// history never share keys), all invoked at the time of a transaction of h
// picked with seed and overlapping one another, each on a process of its
// own. Overlapping, they have no realtime order among themselves, so what
// [Check] finds is exactly name (a G1b also closes a G-single cycle),
// under every model that forbids it. h itself is not modified.
func Plant(h []Txn, name string, seed uint64) ([]Txn, error) {
	x, y := fmt.Sprintf("planted%d-x", len(h)), fmt.Sprintf("planted%d-y", len(h))
	planted, ok := pattern(name, x, y)
	if !ok {
		return nil, fmt.Errorf("listappend: cannot plant %q; known: %v", name, PlantableAnomalies())
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(h))))
	at, process := int64(0), 0
	for i := range h {
		process = max(process, h[i].Process+1)
	}
	if len(h) > 0 {
		at = h[rng.IntN(len(h))].Invoke
	}
	for i := range planted {
		planted[i].Index = len(h) + i
		planted[i].Process = process + i
		planted[i].Invoke, planted[i].Complete = at, at+1
	}
	return slices.Concat(h, planted), nil
}
