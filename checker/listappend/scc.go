package listappend

// components returns the strongly connected component of every node of g
// over the edges whose kind is in mask (comp[v] numbers v's component),
// using Tarjan's algorithm. It is iterative, so a path of a million nodes
// does not make a million-deep call stack.
func components(g *graph, mask kindMask) []int32 {
	n := g.size()
	index := make([]int32, n) // visit order from 1; 0 means unvisited
	low := make([]int32, n)
	comp := make([]int32, n)
	for v := range comp {
		comp[v] = -1 // -1 while unvisited or on the stack
	}
	type frame struct{ v, next int32 } // next: index of the next edge to try
	var stack []int32
	var calls []frame
	visited, count := int32(0), int32(0)
	for root := int32(0); root < n; root++ {
		if index[root] != 0 {
			continue
		}
		visited++
		index[root], low[root] = visited, visited
		stack = append(stack, root)
		calls = append(calls, frame{root, g.start[root]})
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if f.next < g.start[v+1] {
				e := g.edges[f.next]
				f.next++
				w := e.to
				switch {
				case !mask.has(e.kind):
				case index[w] == 0:
					visited++
					index[w], low[w] = visited, visited
					stack = append(stack, w)
					calls = append(calls, frame{w, g.start[w]})
				case comp[w] < 0:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					comp[w] = count
					if w == v {
						break
					}
				}
				count++
			}
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
		}
	}
	return comp
}

// nontrivial returns the members of each component with more than one
// node, each in ascending order, the components ordered by their smallest
// member.
func nontrivial(comp []int32) [][]int32 {
	count := int32(0)
	for _, c := range comp {
		count = max(count, c+1)
	}
	size := make([]int32, count)
	for _, c := range comp {
		size[c]++
	}
	slot := make([]int32, count) // 1 + position in out; 0 while unseen
	var out [][]int32
	for v, c := range comp {
		if size[c] < 2 {
			continue
		}
		if slot[c] == 0 {
			out = append(out, make([]int32, 0, size[c]))
			slot[c] = int32(len(out))
		}
		out[slot[c]-1] = append(out[slot[c]-1], int32(v))
	}
	return out
}
