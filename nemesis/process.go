package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"chaos/control"
	"chaos/db"
)

// The process faults, kill and pause, share what follows: they act on
// processes through db.DB, one node at a time, and remember the nodes they
// acted on until a Stop or a Heal undoes it.

// injection is one step of a process fault: the op it records and what it
// does to each node.
type injection struct {
	family  string // the fault family, for errors
	f       string // the op name
	targets []Target
	probe   Probe
	act     nodeAction
	// settle, when set, runs after act on each node that answered before
	// the fault began: a node that was already silent (killed, say) is
	// not waited for.
	settle func(ctx context.Context, d db.DB, n db.Node) error
	// restarts says that act starts new processes (a kill's stop, a power
	// loss's): they get the clock faults in effect again.
	restarts bool
}

// nodeAction acts on node n of system d through its host's Remote r.
type nodeAction func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error

// processState is the state of kill or pause. Its mutex serializes the
// family's calls.
type processState struct {
	mu sync.Mutex
	// active are the nodes of the fault in effect, which Stop undoes.
	active []db.Node
	// silent are the names of the active nodes that did not answer before
	// the fault began.
	silent []string
	// failed are the nodes a Stop could not bring back (it failed, or ran
	// out of time); only Heal acts on them again.
	failed []db.Node
}

// start picks the targets, checks that they answer, acts on each and
// checks that they stopped answering.
func (s *processState) start(ctx context.Context, c *Cluster, rng *rand.Rand, in injection) (Op, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.active) > 0 {
		return Op{}, fmt.Errorf("%s: a fault is active already on %v", in.family, names(s.active))
	}
	sel, err := selectTargets(ctx, c, pickTarget(in.targets, rng), rng)
	if err != nil {
		return Op{}, fmt.Errorf("%s: %w", in.family, err)
	}
	nodes := sel.nodes
	probe := in.probe.withDefaults()
	v := faultrec.Process{Nodes: names(nodes), Mode: string(sel.mode), Fallback: sel.fallback}
	v.Silent = filterNodes(nodes, func(n db.Node) bool { return !probe.answers(ctx, c.DB, n) })
	s.active, s.silent = nodes, v.Silent
	if err := actOn(ctx, c, nodes, in.act); err != nil {
		return Op{F: in.f, Value: v}, fmt.Errorf("%s: %w", in.family, err)
	}
	v.Answering = filterNodes(nodes, func(n db.Node) bool { return !probe.stopsAnswering(ctx, c.DB, n) })
	v.Effect = EffectObserved
	if len(v.Silent)+len(v.Answering) > 0 {
		v.Effect = EffectNotObserved
	}
	return Op{F: in.f, Value: v}, nil
}

// stop undoes the active fault on every node it acted on (and settles
// those that answered before it) and forgets it; the nodes it fails on
// join failed.
func (s *processState) stop(ctx context.Context, c *Cluster, in injection) (Op, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes, silent := s.active, s.silent
	s.active, s.silent = nil, nil
	if len(nodes) == 0 {
		return Op{}, nil
	}
	op := Op{F: in.f, Value: faultrec.Process{Nodes: names(nodes)}}
	act := in.act
	if in.settle != nil {
		act = func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
			if err := in.act(ctx, d, r, n); err != nil || slices.Contains(silent, n.Name) {
				return err
			}
			return in.settle(ctx, d, n)
		}
	}
	failed, err := actOnEach(ctx, c, nodes, act)
	s.failed = union(s.failed, failed)
	if in.restarts {
		started := slices.DeleteFunc(slices.Clone(nodes), func(n db.Node) bool { return slices.Contains(failed, n) })
		err = errors.Join(err, c.reapplyClocks(ctx, started))
		op.Value = faultrec.Process{Nodes: names(nodes), Reapplied: c.ruleTable().take(names(nodes))}
	}
	if err != nil {
		return op, fmt.Errorf("%s: %w", in.family, err)
	}
	return op, nil
}

// takeAll returns the active and failed nodes, in the order they joined,
// each once, and forgets them all. The caller holds mu.
func (s *processState) takeAll() []db.Node {
	nodes := union(s.active, s.failed)
	s.active, s.silent, s.failed = nil, nil, nil
	return nodes
}

// actOn runs act on every node, concurrently, through its Remote.
func actOn(ctx context.Context, c *Cluster, nodes []db.Node, act nodeAction) error {
	_, err := actOnEach(ctx, c, nodes, act)
	return err
}

// actOnEach is actOn that also returns the nodes act failed on, in order.
func actOnEach(ctx context.Context, c *Cluster, nodes []db.Node, act nodeAction) ([]db.Node, error) {
	errs, err := mapNodes(nodes, func(n db.Node) (error, error) {
		r, err := nodeRemote(c, n)
		if err == nil {
			err = act(ctx, c.DB, r, n)
		}
		return err, err
	})
	var failed []db.Node
	for i, e := range errs {
		if e != nil {
			failed = append(failed, nodes[i])
		}
	}
	return failed, err
}

// union returns a followed by the nodes of b not in a.
func union(a, b []db.Node) []db.Node {
	out := slices.Clone(a)
	for _, n := range b {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// filterNodes returns the names of the nodes keep accepts, in order; keep
// runs for every node concurrently.
func filterNodes(nodes []db.Node, keep func(db.Node) bool) []string {
	kept, _ := mapNodes(nodes, func(n db.Node) (bool, error) { return keep(n), nil })
	var out []string
	for i, n := range nodes {
		if kept[i] {
			out = append(out, n.Name)
		}
	}
	return out
}

// requireRemotes reports the first node of c without a Remote.
func requireRemotes(family string, c *Cluster) error {
	if len(c.Nodes) == 0 {
		return fmt.Errorf("%s: the cluster has no nodes", family)
	}
	for _, n := range c.Nodes {
		if _, err := nodeRemote(c, n); err != nil {
			return fmt.Errorf("%s: %w", family, err)
		}
	}
	return nil
}
