package listappend

import "slices"

// status is the outcome of a bounded search.
type status uint8

const (
	none    status = iota // searched everything: there is none
	found                 // found one
	unknown               // gave up: the budget ran out, or only walks that are not cycles turned up
)

// hop is one edge of a walk: edge index e (into the graph's edges) out of
// node from.
type hop struct{ from, e int32 }

// walker runs breadth-first searches over the states of one graph. A
// state is a node times a mode: one mode for plain searches, four for
// G-nonadjacent ones (bit 1: the last edge was rw; bit 0: an rw edge was
// taken since the anchor). Its arrays are reused from search to search;
// stamp[s] == gen marks the states the current search reached.
type walker struct {
	prev, from []int32
	stamp      []uint32
	gen        uint32
	queue      []int32
}

// find searches g for a cycle of class c: an anchor edge of a kind in
// c.anchor, closed by a path over c.path. Anchors are tried in node order,
// and a path is the shortest through its anchor. Only anchors whose ends
// share a component over c.anchor|c.path can close a cycle; the others are
// skipped without search. Each edge a search follows costs one unit of
// budget; when it runs out the answer is unknown.
func (w *walker) find(g *graph, c class, budget *int) ([]hop, status) {
	comp := components(g, c.anchor|c.path)
	result := none
	for u := int32(0); u < g.size(); u++ {
		for ei := g.start[u]; ei < g.start[u+1]; ei++ {
			e := g.edges[ei]
			if !c.anchor.has(e.kind) || comp[u] != comp[e.to] {
				continue
			}
			path, st := w.path(g, e.to, u, c, budget)
			switch st {
			case unknown:
				return nil, unknown
			case found:
				cyc := append([]hop{{u, ei}}, path...)
				if simple(cyc) {
					return cyc, found
				}
				result = unknown // a closed walk, not a cycle: claim nothing
			}
		}
	}
	return nil, result
}

// path returns a shortest path from src to dst over the kinds in c.path
// (and, when c.nonadjacent, honouring G-nonadjacent's rule for a path
// that follows and precedes an rw anchor: no two rw edges in a row, none
// first or last, at least one in all).
func (w *walker) path(g *graph, src, dst int32, c class, budget *int) ([]hop, status) {
	modes, startMode, goalMode := int32(1), int32(0), int32(0)
	if c.nonadjacent {
		modes, startMode, goalMode = 4, 2, 1
	}
	w.reset(int(g.size() * modes))
	start, goal := src*modes+startMode, dst*modes+goalMode
	w.stamp[start] = w.gen
	w.queue = append(w.queue[:0], start)
	for qi := 0; qi < len(w.queue); qi++ {
		s := w.queue[qi]
		v, m := s/modes, s%modes
		for ei := g.start[v]; ei < g.start[v+1]; ei++ {
			if *budget--; *budget < 0 {
				return nil, unknown
			}
			e := g.edges[ei]
			nm, ok := nextMode(c, m, e.kind)
			if !ok {
				continue
			}
			ns := e.to*modes + nm
			if w.stamp[ns] == w.gen {
				continue
			}
			w.stamp[ns], w.prev[ns], w.from[ns] = w.gen, ei, s
			if ns == goal {
				return w.trace(start, goal, modes), found
			}
			w.queue = append(w.queue, ns)
		}
	}
	return nil, none
}

// nextMode returns the mode after following an edge of kind k in mode m,
// and false when c does not allow it.
func nextMode(c class, m int32, k EdgeKind) (int32, bool) {
	switch {
	case !c.path.has(k):
		return 0, false
	case !c.nonadjacent:
		return 0, true
	case k == RW && m&2 != 0:
		return 0, false
	case k == RW:
		return 3, true
	default:
		return m & 1, true
	}
}

// reset prepares the walker for a search over n states.
func (w *walker) reset(n int) {
	if len(w.stamp) < n {
		w.prev = make([]int32, n)
		w.from = make([]int32, n)
		w.stamp = make([]uint32, n)
		w.gen = 0
	}
	w.gen++
	if w.gen == 0 { // wrapped: old stamps could match again
		clear(w.stamp)
		w.gen = 1
	}
}

// trace returns the hops from start to goal the last search recorded.
func (w *walker) trace(start, goal, modes int32) []hop {
	var out []hop
	for s := goal; s != start; s = w.from[s] {
		out = append(out, hop{from: w.from[s] / modes, e: w.prev[s]})
	}
	slices.Reverse(out)
	return out
}

// simple reports whether the closed walk cyc visits no node twice.
func simple(cyc []hop) bool {
	nodes := make([]int32, len(cyc))
	for i, h := range cyc {
		nodes[i] = h.from
	}
	slices.Sort(nodes)
	return len(slices.Compact(nodes)) == len(cyc)
}
