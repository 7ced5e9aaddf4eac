package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grudgeNodes returns n1..nk.
func grudgeNodes(k int) []string {
	out := make([]string, k)
	for i := range out {
		out[i] = fmt.Sprintf("n%d", i+1)
	}
	return out
}

// requireGrudgeWellFormed checks what every Grudge promises: symmetric,
// sorted, no self, no duplicates, only cluster nodes, no empty lists.
func requireGrudgeWellFormed(t *testing.T, g Grudge, nodes []string) {
	t.Helper()
	for a, bs := range g {
		require.Contains(t, nodes, a)
		require.NotEmpty(t, bs, "%s maps to an empty list", a)
		require.True(t, slices.IsSorted(bs), "%s: %v unsorted", a, bs)
		require.Equal(t, len(bs), len(slices.Compact(slices.Clone(bs))), "%s: duplicates in %v", a, bs)
		for _, b := range bs {
			require.Contains(t, nodes, b)
			require.NotEqual(t, a, b, "%s drops itself", a)
			require.Contains(t, g[b], a, "%s drops %s but not the other way", a, b)
		}
	}
}

func TestSymmetricCompletesAndCleans(t *testing.T) {
	g := Grudge{"n1": {"n3", "n2", "n2", "n1"}, "n4": {}}.Symmetric()
	assert.Equal(t, Grudge{"n1": {"n2", "n3"}, "n2": {"n1"}, "n3": {"n1"}}, g)
	assert.Equal(t, []string{"n1", "n4"}, g.Sees("n1", grudgeNodes(4)))
}

func TestIsolateCutsOneNodeFromAllOthers(t *testing.T) {
	nodes := grudgeNodes(5)
	g := grudgeIsolate(nodes, "n3")
	requireGrudgeWellFormed(t, g, nodes)
	assert.Equal(t, Grudge{"n3": {"n1", "n2", "n4", "n5"}, "n1": {"n3"}, "n2": {"n3"}, "n4": {"n3"}, "n5": {"n3"}}, g)
}

func TestHalvesSplitIntoTwoSidesThatSeeOnlyThemselves(t *testing.T) {
	for k := 2; k <= 9; k++ {
		for seed := range uint64(20) {
			nodes := grudgeNodes(k)
			g, err := grudgeHalves(nodes, rand.New(rand.NewPCG(seed, 0)))
			require.NoError(t, err)
			requireGrudgeWellFormed(t, g, nodes)
			sizes := map[int]int{}
			for _, n := range nodes {
				view := g.Sees(n, nodes)
				sizes[len(view)]++
				for _, m := range view {
					require.Equal(t, view, g.Sees(m, nodes), "k=%d seed=%d: %s and %s see different sides", k, seed, n, m)
				}
			}
			if k%2 == 0 {
				require.Equal(t, map[int]int{k / 2: k}, sizes)
			} else {
				require.Equal(t, map[int]int{k / 2: k / 2, k/2 + 1: k/2 + 1}, sizes)
			}
		}
	}
	_, err := grudgeHalves([]string{"n1"}, rand.New(rand.NewPCG(1, 0)))
	require.EqualError(t, err, "halves needs at least 2 nodes, the cluster has 1")
}

func TestMajoritiesRingGivesEveryNodeADifferentMajority(t *testing.T) {
	for k := 3; k <= 9; k++ {
		for seed := range uint64(20) {
			nodes := grudgeNodes(k)
			g, err := grudgeMajoritiesRing(nodes, rand.New(rand.NewPCG(seed, 0)))
			require.NoError(t, err)
			requireGrudgeWellFormed(t, g, nodes)
			seen := map[string]string{}
			for _, n := range nodes {
				view := g.Sees(n, nodes)
				require.GreaterOrEqual(t, len(view), k/2+1, "k=%d seed=%d: %s sees only %v", k, seed, n, view)
				key := fmt.Sprint(view)
				require.NotContains(t, seen, key, "k=%d seed=%d: %s and %s see the same majority %v", k, seed, n, seen[key], view)
				seen[key] = n
			}
		}
	}
	_, err := grudgeMajoritiesRing(grudgeNodes(2), rand.New(rand.NewPCG(1, 0)))
	require.EqualError(t, err, "majorities-ring needs at least 3 nodes, the cluster has 2")
}

func TestBridgeJoinsTwoHalvesThroughOneNode(t *testing.T) {
	for k := 3; k <= 9; k++ {
		for seed := range uint64(20) {
			nodes := grudgeNodes(k)
			g, err := grudgeBridge(nodes, rand.New(rand.NewPCG(seed, 0)))
			require.NoError(t, err)
			requireGrudgeWellFormed(t, g, nodes)
			var bridges []string
			for _, n := range nodes {
				if len(g[n]) == 0 {
					bridges = append(bridges, n)
				}
			}
			require.Len(t, bridges, 1, "k=%d seed=%d: %v", k, seed, g)
			for _, n := range nodes {
				if n == bridges[0] {
					continue
				}
				view := g.Sees(n, nodes)
				require.Contains(t, view, bridges[0])
				// The two halves differ in size by at most one, and each
				// sees itself and the bridge.
				require.InDelta(t, float64(k+1)/2, float64(len(view)), 1, "k=%d seed=%d: %s sees %v", k, seed, n, view)
				for _, m := range view {
					if m != bridges[0] {
						require.Equal(t, view, g.Sees(m, nodes))
					}
				}
			}
		}
	}
	_, err := grudgeBridge(grudgeNodes(2), rand.New(rand.NewPCG(1, 0)))
	require.EqualError(t, err, "bridge needs at least 3 nodes, the cluster has 2")
}

func TestTopologiesAreTheSameForTheSameSeed(t *testing.T) {
	nodes := grudgeNodes(5)
	for _, f := range []func([]string, *rand.Rand) (Grudge, error){grudgeHalves, grudgeMajoritiesRing, grudgeBridge} {
		a, err := f(nodes, rand.New(rand.NewPCG(7, 7)))
		require.NoError(t, err)
		b, err := f(nodes, rand.New(rand.NewPCG(7, 7)))
		require.NoError(t, err)
		require.Equal(t, a, b)
	}
}
