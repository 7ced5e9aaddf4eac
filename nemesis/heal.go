package nemesis

import (
	"context"
	"errors"
	"fmt"

	"chaos/control"
	"chaos/db"
)

// HealAll runs the Heal of every fault, in the order given, on every node
// of c, and returns every error joined, each naming its family; nil when
// all healed. It never stops at the first error: what can be healed is.
//
// Order matters where one fault hides another: put pause before the
// families that talk to the nodes (clock's hooks), so that they answer.
func HealAll(ctx context.Context, c *Cluster, faults []Fault) error {
	var errs []error
	for _, f := range faults {
		if err := f.Heal(ctx, c); err != nil {
			errs = append(errs, fmt.Errorf("heal %s: %w", f.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// NodeHeal is how healing one node ended: Err is nil when every family
// healed it.
type NodeHeal struct {
	Node db.Node
	Err  error
}

// HealEach heals the nodes of c one at a time, each with HealAll on a view
// of c that holds that node alone, so that a failure is told apart per
// node. It relies on every family's Heal acting on each node of its
// Cluster independently, which kill, pause and clock do, and which a heal
// that clears each host's own rules does too. Nodes are healed in order,
// never concurrently, because Fault does not promise that Heal is safe
// for concurrent use.
func HealEach(ctx context.Context, c *Cluster, faults []Fault) []NodeHeal {
	out := make([]NodeHeal, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = NodeHeal{Node: n, Err: HealAll(ctx, only(c, n), faults)}
	}
	return out
}

// only is c restricted to node n, with its hooks and every capability
// that takes the node it acts on. Its Leader, States and
// Events are nil: a heal has no use for them.
func only(c *Cluster, n db.Node) *Cluster {
	v := &Cluster{Nodes: []db.Node{n}, DB: c.DB, SharedClock: c.SharedClock, FaultProxy: c.FaultProxy, VDSOClock: c.VDSOClock, Hooks: c.Hooks,
		Timing: c.Timing, Storage: c.Storage, Membership: c.Membership, FakeClocks: c.FakeClocks, Processes: c.Processes,
		Peers: c.Peers, Remotes: map[string]control.Remote{}}
	if r, ok := c.Remotes[n.Name]; ok {
		v.Remotes[n.Name] = r
	}
	return v
}

// wrapFamily prefixes a non-nil err with the fault family.
func wrapFamily(family string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", family, err)
}
