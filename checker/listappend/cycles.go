package listappend

import "slices"

// class is one cycle search: cycles made of an anchor edge whose kind is
// in anchor and a path back over the kinds in path. name is the class the
// search looks for; what a found cycle is called is decided by its edges
// (see classify), which differ only when an earlier search gave up.
type class struct {
	name        string
	anchor      kindMask
	path        kindMask
	nonadjacent bool
}

// searchOrder returns the searches of one component, most severe class
// first, each class followed by its variant with the extra edges (realtime
// and process) when the graph has any:
//
//	G0, G1c, G-single, G-nonadjacent, G2-item
//
// Searches stop at the first cycle found, which is sound for the verdict:
// each search is complete when it decides, so a component holding a cycle
// of an earlier class would have stopped there, and every model forbids a
// prefix of this order (see Forbids). The first cycle found is therefore
// forbidden exactly when the component holds a forbidden cycle. An
// extended variant finds only cycles that need an extra edge, since the
// base search before it found none without.
func searchOrder(extra kindMask, suffix string) []class {
	ww, wr, rw := maskOf(WW), maskOf(WR), maskOf(RW)
	base := []class{
		{name: G0, anchor: ww, path: ww},
		{name: G1c, anchor: wr, path: ww | wr},
		{name: GSingle, anchor: rw, path: ww | wr},
		{name: GNonadjacent, anchor: rw, path: ww | wr | rw, nonadjacent: true},
		{name: G2Item, anchor: rw, path: ww | wr | rw},
	}
	var out []class
	for _, c := range base {
		out = append(out, c)
		if extra == 0 {
			continue
		}
		x := c
		x.name += suffix
		x.path |= extra
		if c.name == G0 {
			x.anchor = extra // a ww-only cycle was G0's
		}
		out = append(out, x)
	}
	return out
}

// subgraph is one component as a graph of its own: local node i is global
// node nodes[i]; edges keep their kind, key and ref.
type subgraph struct {
	g     *graph
	nodes []int32
}

// searchCycles splits the graph into strongly connected components and
// searches each one holding a cycle. txns is the number of transaction
// nodes; nodes from txns on are time barriers.
func (r *run) searchCycles(g *graph) {
	comp := components(g, maskOf(WW, WR, RW, barrier, Process))
	comps := nontrivial(comp)
	r.stats.Components = len(comps)
	if len(comps) == 0 {
		return
	}
	var extra kindMask
	suffix := ProcessSuffix
	if r.opts.realtime() {
		extra |= maskOf(barrier)
		suffix = RealtimeSuffix
	}
	if r.opts.process() {
		extra |= maskOf(Process)
	}
	order := searchOrder(extra, suffix)
	localOf := make([]int32, g.size())
	w := &walker{}
	for _, members := range comps {
		r.searchComponent(induce(g, comp, members, localOf), order, w)
	}
}

// induce returns the component whose members are given as a subgraph.
// localOf is scratch of one entry per node of g.
func induce(g *graph, comp, members, localOf []int32) subgraph {
	for i, v := range members {
		localOf[v] = int32(i)
	}
	c := comp[members[0]]
	each := func(emit emitFunc) {
		for i, v := range members {
			for _, e := range g.out(v) {
				if comp[e.to] == c {
					e.to = localOf[e.to]
					emit(int32(i), e)
				}
			}
		}
	}
	return subgraph{g: buildGraph(int32(len(members)), each), nodes: members}
}

// searchComponent runs the searches of order over one component, within
// one budget, and reports the first cycle found; searches that gave up
// are recorded as undecided.
func (r *run) searchComponent(sub subgraph, order []class, w *walker) {
	budget := r.opts.MaxSearchSteps
	near := r.nearest(sub.nodes)
	gaveUp := false
	for _, c := range order {
		cyc, st := w.find(sub.g, c, &budget)
		switch st {
		case found:
			r.report(r.cycleAnomaly(sub, cyc))
			return
		case unknown:
			r.undecided = append(r.undecided, undecided{class: c.name, near: near})
			gaveUp = true
		}
	}
	if !gaveUp {
		// Every cycle falls in some class, so a component with one cannot
		// come out empty; say so rather than claim it holds none.
		r.undecided = append(r.undecided, undecided{class: "cycle", near: near})
	}
}

// nearest returns the smallest Index of the transactions among nodes.
func (r *run) nearest(nodes []int32) int {
	best := r.h[nodes[0]].Index
	for _, v := range nodes {
		if v < int32(len(r.h)) {
			best = min(best, r.h[v].Index)
		}
	}
	return best
}

// cycleAnomaly turns a cycle of sub into an anomaly named after its edges.
func (r *run) cycleAnomaly(sub subgraph, cyc []hop) Anomaly {
	steps := r.cycleSteps(sub, cyc)
	txns := make([]int, len(steps))
	for i, s := range steps {
		txns[i] = s.From
	}
	return Anomaly{Name: classify(steps), Txns: txns, Steps: steps}
}

// cycleSteps returns the steps of a cycle of sub, a run of barrier edges
// becoming one realtime step, starting from the transaction with the
// smallest Index.
func (r *run) cycleSteps(sub subgraph, cyc []hop) []Step {
	n := int32(len(r.h))
	first := slices.IndexFunc(cyc, func(h hop) bool { return sub.nodes[h.from] < n })
	var steps []Step
	for i := 0; i < len(cyc); i++ {
		h := cyc[(first+i)%len(cyc)]
		from, e := sub.nodes[h.from], sub.g.edges[h.e]
		to := sub.nodes[e.to]
		for e.kind == barrier && to >= n {
			i++
			e = sub.g.edges[cyc[(first+i)%len(cyc)].e]
			to = sub.nodes[e.to]
		}
		steps = append(steps, r.step(from, to, e))
	}
	lowest := 0
	for i, s := range steps {
		if s.From < steps[lowest].From {
			lowest = i
		}
	}
	return append(steps[lowest:], steps[:lowest]...)
}

// step describes edge e from transaction from to transaction to, a
// barrier edge standing for the realtime order between them.
func (r *run) step(from, to int32, e edge) Step {
	s := Step{From: r.h[from].Index, To: r.h[to].Index, Kind: e.kind}
	if e.key >= 0 {
		s.Key = r.keys[e.key]
	}
	switch e.kind {
	case WW:
		order := r.versions[e.key].order
		s.FromValue, s.ToValue = order[e.ref-1], order[e.ref]
	case WR:
		list := r.op(e.ref).List
		s.ReadLen, s.FromValue = len(list), list[len(list)-1]
	case RW:
		list := r.op(e.ref).List
		s.ReadLen, s.ToValue = len(list), r.versions[e.key].order[len(list)]
		if len(list) > 0 {
			s.FromValue = list[len(list)-1]
		}
	case barrier:
		s.Kind, s.Completed, s.Invoked = Realtime, r.h[from].Complete, r.h[to].Invoke
	case Process:
		s.Proc = r.h[from].Process
	}
	return s
}

// classify names a cycle by its edges: G0 with no wr and no rw edge, G1c
// with wr but no rw, G-single with one rw, G-nonadjacent with several
// none of which follow one another (around the cycle), G2-item otherwise;
// suffixed -realtime when it has a realtime edge, else -process when it
// has a process edge.
func classify(steps []Step) string {
	count := map[EdgeKind]int{}
	adjacent := false
	for i, s := range steps {
		count[s.Kind]++
		if s.Kind == RW && steps[(i+1)%len(steps)].Kind == RW {
			adjacent = true
		}
	}
	name := G2Item
	switch {
	case count[RW] == 0 && count[WR] == 0:
		name = G0
	case count[RW] == 0:
		name = G1c
	case count[RW] == 1:
		name = GSingle
	case !adjacent:
		name = GNonadjacent
	}
	switch {
	case count[Realtime] > 0:
		name += RealtimeSuffix
	case count[Process] > 0:
		name += ProcessSuffix
	}
	return name
}
