package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"chaos/control"
	"chaos/db"
)

// Target says which nodes a fault acts on, with Jepsen's names.
type Target string

const (
	// TargetOne is one node chosen at random.
	TargetOne Target = "one"
	// TargetMinority is the largest set of nodes that is not a majority
	// (n/2 rounded down), chosen at random: 2 of 5, 1 of 3, 2 of 4.
	TargetMinority Target = "minority"
	// TargetMajority is the smallest majority (n/2+1), chosen at random.
	TargetMajority Target = "majority"
	// TargetAll is every node.
	TargetAll Target = "all"
	// TargetLeader is the node Cluster.Leader names.
	TargetLeader Target = "leader"
	// TargetBehind is the follower with the shortest log, as
	// Cluster.States reports it. It is not among AllTargets (old seeds
	// replay); a fault uses it when its Targets name it.
	TargetBehind Target = "behind"
)

// AllTargets returns every Target, in the order above: what a fault picks
// among when it is given none.
func AllTargets() []Target {
	return []Target{TargetOne, TargetMinority, TargetMajority, TargetAll, TargetLeader}
}

// pickTarget chooses one of targets (AllTargets when empty) with rng.
func pickTarget(targets []Target, rng *rand.Rand) Target {
	if len(targets) == 0 {
		targets = AllTargets()
	}
	return targets[rng.IntN(len(targets))]
}

// SelectNodes returns the nodes t designates in c, in c.Nodes order. The
// random choices come from rng alone, so a seed replays them. It fails when
// t is unknown, when the cluster has no node set of that kind (a minority
// of one node), or when t is TargetLeader and no leader is known.
func SelectNodes(ctx context.Context, c *Cluster, t Target, rng *rand.Rand) ([]db.Node, error) {
	n := len(c.Nodes)
	if n == 0 {
		return nil, errors.New("select nodes: the cluster has no nodes")
	}
	switch t {
	case TargetOne:
		return sample(c.Nodes, 1, rng), nil
	case TargetMinority:
		if n/2 == 0 {
			return nil, fmt.Errorf("select %s: a cluster of %d node has no minority", t, n)
		}
		return sample(c.Nodes, n/2, rng), nil
	case TargetMajority:
		return sample(c.Nodes, n/2+1, rng), nil
	case TargetAll:
		return slices.Clone(c.Nodes), nil
	case TargetLeader:
		return leaderNode(ctx, c)
	case TargetBehind:
		return behindNode(ctx, c)
	}
	return nil, fmt.Errorf("select nodes: unknown target %q (want one, minority, majority, all, leader or behind)", t)
}

// sample returns k of nodes chosen uniformly with rng, in their original
// order.
func sample(nodes []db.Node, k int, rng *rand.Rand) []db.Node {
	idx := rng.Perm(len(nodes))[:k]
	slices.Sort(idx)
	out := make([]db.Node, k)
	for i, j := range idx {
		out[i] = nodes[j]
	}
	return out
}

// selection is what a target designates: the nodes, the target they
// were chosen by, and, when that is not the target asked for, why.
type selection struct {
	nodes []db.Node
	mode  Target
	// fallback says why the target asked for gave way to TargetOne: the
	// system cannot report the role it needs. Empty when it did not.
	fallback string
}

// selectTargets is SelectNodes, but a target that needs a role the
// system cannot report (TargetLeader without the Leader capability,
// TargetBehind without States), or does not report now (no leader in the
// middle of an election, no follower answering), falls back to one node
// chosen with rng, so that the fault's turn acts on a node instead of
// being refused for a passing reason.
func selectTargets(ctx context.Context, c *Cluster, t Target, rng *rand.Rand) (selection, error) {
	var missing error
	switch {
	case t == TargetLeader && c.Leader == nil:
		missing = errNoLeader(c)
	case t == TargetBehind && c.States == nil:
		missing = errNoStates(c)
	}
	var nodes []db.Node
	if missing == nil {
		nodes, missing = SelectNodes(ctx, c, t, rng)
		if missing == nil || ctx.Err() != nil || (t != TargetLeader && t != TargetBehind) {
			return selection{nodes: nodes, mode: t}, missing
		}
	}
	if len(c.Nodes) == 0 {
		return selection{mode: t}, missing
	}
	return selection{nodes: sample(c.Nodes, 1, rng), mode: TargetOne,
		fallback: fmt.Sprintf("%s: %v; one node instead", t, missing)}, nil
}

// leaderNode is the node Cluster.Leader names, alone.
func leaderNode(ctx context.Context, c *Cluster) ([]db.Node, error) {
	if c.Leader == nil {
		return nil, fmt.Errorf("select leader: %w", errNoLeader(c))
	}
	name, err := c.Leader(ctx)
	if err != nil {
		return nil, fmt.Errorf("select leader: %w", err)
	}
	for _, n := range c.Nodes {
		if n.Name == name {
			return []db.Node{n}, nil
		}
	}
	return nil, fmt.Errorf("select leader: the leader %q is not a node of the cluster", name)
}

// behindNode is the follower with the shortest log, alone.
func behindNode(ctx context.Context, c *Cluster) ([]db.Node, error) {
	st, err := states(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("select behind: %w", err)
	}
	name := behind(st, partitionNames(c.Nodes))
	if name == "" {
		return nil, errors.New("select behind: no node answers as a follower")
	}
	n, err := nodeByName(c, name)
	return []db.Node{n}, err
}

// names returns the nodes' names, in order.
func names(nodes []db.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// nodeRemote returns the Remote that reaches n's host, or an error naming n.
func nodeRemote(c *Cluster, n db.Node) (control.Remote, error) {
	r, ok := c.Remotes[n.Name]
	if !ok || r == nil {
		return nil, fmt.Errorf("%s: no remote for the node's host", n.Name)
	}
	return r, nil
}

// eachNode runs fn for every node concurrently and returns every error,
// joined in the nodes' order (nil when all succeeded). It never stops at
// the first error: a heal or a restart must reach every node.
func eachNode(nodes []db.Node, fn func(n db.Node) error) error {
	_, err := mapNodes(nodes, func(n db.Node) (struct{}, error) { return struct{}{}, fn(n) })
	return err
}

// mapNodes runs fn for every node concurrently and returns its results in
// the nodes' order, with every error joined.
func mapNodes[T any](nodes []db.Node, fn func(n db.Node) (T, error)) ([]T, error) {
	out := make([]T, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { out[i], errs[i] = fn(n) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
