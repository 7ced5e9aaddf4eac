package listappend

// kindMask is a set of edge kinds.
type kindMask uint8

// maskOf returns the set of kinds.
func maskOf(kinds ...EdgeKind) kindMask {
	var m kindMask
	for _, k := range kinds {
		m |= 1 << k
	}
	return m
}

// has reports whether k is in m.
func (m kindMask) has(k EdgeKind) bool { return m&(1<<k) != 0 }

// edge is one stored edge of a graph, out of the node whose list holds it.
// ref is what justifies it: for WW the position, in key's version order,
// of the value the target appended; for WR and RW the flat id of the read;
// unused for the others. Realtime order is stored as barrier edges (see
// realtime.go), never as Realtime edges.
type edge struct {
	to   int32
	key  int32
	ref  int32
	kind EdgeKind
}

// graph is a directed multigraph in compressed form: node v's out-edges
// are edges[start[v]:start[v+1]], in the order they were emitted.
type graph struct {
	start []int32
	edges []edge
}

// size returns the number of nodes.
func (g *graph) size() int32 { return int32(len(g.start) - 1) }

// out returns v's out-edges.
func (g *graph) out(v int32) []edge { return g.edges[g.start[v]:g.start[v+1]] }

// emitFunc receives one edge out of from.
type emitFunc func(from int32, e edge)

// buildGraph builds a graph of n nodes from the edges each emits. It calls
// each twice (to count, then to fill), so each must emit the same edges in
// the same order both times; in exchange no edge list is held twice.
func buildGraph(n int32, each func(emitFunc)) *graph {
	g := &graph{start: make([]int32, n+1)}
	each(func(from int32, _ edge) { g.start[from+1]++ })
	for v := int32(0); v < n; v++ {
		g.start[v+1] += g.start[v]
	}
	g.edges = make([]edge, g.start[n])
	next := make([]int32, n)
	copy(next, g.start[:n])
	each(func(from int32, e edge) {
		g.edges[next[from]] = e
		next[from]++
	})
	return g
}
