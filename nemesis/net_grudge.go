package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Grudge is the shape of a network partition, as Jepsen names it: for each
// node, the nodes whose traffic it drops. A node missing from the map, or
// mapped to an empty list, drops nothing. Lists are sorted and never hold
// the node itself.
type Grudge map[string][]string

// Topology names a way to cut the cluster into a Grudge.
type Topology string

const (
	// IsolateOne cuts one node, chosen at random, off from all the others.
	IsolateOne Topology = "isolate-one"
	// IsolateLeader cuts the node Cluster.Leader names off from the others;
	// when no leader is known it isolates a random node, as IsolateOne.
	IsolateLeader Topology = "isolate-leader"
	// Halves splits the nodes at random into two halves that cannot reach
	// each other: n/2 (rounded down) on one side, the rest on the other.
	Halves Topology = "halves"
	// MajoritiesRing gives every node a view of a majority, but no two
	// nodes the same majority (Jepsen's majorities-ring): nodes sit on a
	// random ring and see only their nearest neighbours.
	MajoritiesRing Topology = "majorities-ring"
	// Bridge splits the other nodes into two halves that cannot reach each
	// other, joined by one node, chosen at random, that sees both.
	Bridge Topology = "bridge"
)

// AllTopologies returns every Topology: what Partition picks among when it
// is given none.
func AllTopologies() []Topology {
	return []Topology{IsolateOne, IsolateLeader, Halves, MajoritiesRing, Bridge}
}

// Symmetric returns g with every cut made both ways: when a drops b, b
// drops a too. Lists come out sorted and free of duplicates; nodes that
// drop nothing are left out.
func (g Grudge) Symmetric() Grudge {
	out := Grudge{}
	add := func(a, b string) {
		if a != b && !slices.Contains(out[a], b) {
			out[a] = append(out[a], b)
		}
	}
	for a, bs := range g {
		for _, b := range bs {
			add(a, b)
			add(b, a)
		}
	}
	for a := range out {
		slices.Sort(out[a])
	}
	return out
}

// Sees returns the nodes of nodes that node does not drop, itself
// included, in the order of nodes.
func (g Grudge) Sees(node string, nodes []string) []string {
	var out []string
	for _, n := range nodes {
		if !slices.Contains(g[node], n) {
			out = append(out, n)
		}
	}
	return out
}

// grudgeOf cuts between components: every node drops the nodes of every
// other component. Nodes in no component drop nothing and are dropped by
// nobody.
func grudgeOf(components ...[]string) Grudge {
	g := Grudge{}
	for i, comp := range components {
		for j, other := range components {
			if i == j {
				continue
			}
			for _, n := range comp {
				g[n] = append(g[n], other...)
			}
		}
	}
	return g.Symmetric()
}

// grudgeIsolate cuts victim off from every other node.
func grudgeIsolate(nodes []string, victim string) Grudge {
	rest := slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n == victim })
	return grudgeOf([]string{victim}, rest)
}

// grudgeShuffled returns a copy of nodes in an order drawn from rng.
func grudgeShuffled(nodes []string, rng *rand.Rand) []string {
	s := slices.Clone(nodes)
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

// grudgeHalves splits nodes at random into n/2 and the rest.
func grudgeHalves(nodes []string, rng *rand.Rand) (Grudge, error) {
	if len(nodes) < 2 {
		return nil, fmt.Errorf("%s needs at least 2 nodes, the cluster has %d", Halves, len(nodes))
	}
	s := grudgeShuffled(nodes, rng)
	return grudgeOf(s[:len(s)/2], s[len(s)/2:]), nil
}

// grudgeBridge puts one random node between two halves of the others.
func grudgeBridge(nodes []string, rng *rand.Rand) (Grudge, error) {
	if len(nodes) < 3 {
		return nil, fmt.Errorf("%s needs at least 3 nodes, the cluster has %d", Bridge, len(nodes))
	}
	s := grudgeShuffled(nodes, rng)
	rest := s[1:]
	return grudgeOf(rest[:len(rest)/2], rest[len(rest)/2:]), nil
}

// grudgeMajoritiesRing places the nodes on a random ring where each sees
// itself and its d nearest neighbours on either side, with d the smallest
// reach that makes the view (2d+1 nodes) a majority. Views centred on
// different nodes differ as long as the view is smaller than the ring;
// with 3 nodes it would not be, so the ring is opened into a line instead
// (the two ends cut each other): views {a,b}, {a,b,c}, {b,c}.
func grudgeMajoritiesRing(nodes []string, rng *rand.Rand) (Grudge, error) {
	n := len(nodes)
	if n < 3 {
		return nil, fmt.Errorf("%s needs at least 3 nodes, the cluster has %d", MajoritiesRing, n)
	}
	ring := grudgeShuffled(nodes, rng)
	if n == 3 {
		return Grudge{ring[0]: {ring[2]}}.Symmetric(), nil
	}
	majority := n/2 + 1
	d := majority / 2 // 2d+1 >= majority
	g := Grudge{}
	for i, a := range ring {
		for j, b := range ring {
			dist := (j - i + n) % n
			if min(dist, n-dist) > d {
				g[a] = append(g[a], b)
			}
		}
	}
	return g.Symmetric(), nil
}
