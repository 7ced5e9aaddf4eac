package nemesis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"chaos/control"
	"chaos/history/faultrec"
	"chaos/nemesis/hostcmd"
)

// netCut is the network cut of a targeted fault: a Grudge that a sequence
// reshapes as it goes (cut the leader off, then move a node across). It
// uses chaos-node's drop lists where every node has fault hooks, else
// iptables DROP rules in hostcmd.TargetChain. A reshape adds the new cuts
// before it removes the old ones, so no link that both grudges cut is ever
// open.
//
// Cuts of several targeted faults compose: with iptables each adds and
// deletes its own rules; with hooks, whose drop list is one list per node,
// every node drops the union of the cuts the Cluster's table holds.
//
// A netCut is not safe for concurrent use; its fault serializes calls.
type netCut struct {
	// owner names the cut in the Cluster's table: the fault's family.
	owner string
	// mech is the mechanism of the active cut, "" when none is.
	mech   string
	active Grudge
}

// cutTable holds the hook cuts in place, by owner. The zero value is
// ready; it is safe for concurrent use.
type cutTable struct {
	mu sync.Mutex
	by map[string]Grudge
}

// swap makes g owner's cut (nil: none) and returns the union of every
// owner's cuts before and after.
func (t *cutTable) swap(owner string, g Grudge) (before, after Grudge) {
	t.mu.Lock()
	defer t.mu.Unlock()
	before = t.unionLocked()
	if t.by == nil {
		t.by = map[string]Grudge{}
	}
	if g == nil {
		delete(t.by, owner)
	} else {
		t.by[owner] = g
	}
	return before, t.unionLocked()
}

func (t *cutTable) unionLocked() Grudge {
	u := Grudge{}
	for _, g := range t.by {
		u = unionGrudge(u, g)
	}
	return u
}

// clear forgets every cut.
func (t *cutTable) clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.by = nil
}

// cutMechanism is MechHooks when every node of c has fault hooks, else
// MechIPTables (whose availability Available checks with the host probe).
func cutMechanism(c *Cluster) string {
	if netHooksMissing(c, partitionNames(c.Nodes)) == nil {
		return MechHooks
	}
	return MechIPTables
}

// cutAvailable reports why no mechanism can cut c's network, or nil.
func cutAvailable(ctx context.Context, c *Cluster) error {
	if cutMechanism(c) == MechHooks {
		return nil
	}
	p := &Partition{Mechanism: MechIPTables}
	_, err := p.Choose(ctx, c)
	return err
}

// set makes g the cut, skipping the nodes in down (killed: they have no
// drop list to set, and their rules stay in place). g is made symmetric.
func (n *netCut) set(ctx context.Context, c *Cluster, g Grudge, down ...string) error {
	g = g.Symmetric()
	if n.mech == "" {
		n.mech = cutMechanism(c)
	}
	var err error
	if n.mech == MechHooks {
		err = n.applyHooks(ctx, c, g, down)
	} else {
		err = n.setIPTables(ctx, c, n.active, g)
	}
	n.active = g
	return err
}

// applyHooks makes g the owner's cut in the table and sets every node's
// drop list to the new union. Links that only the old union cuts stay cut
// until every node has the new cuts: the union of both first, when it is
// more than the new one.
func (n *netCut) applyHooks(ctx context.Context, c *Cluster, g Grudge, down []string) error {
	before, after := c.cutTable().swap(n.owner, g)
	if u := unionGrudge(before, after); !maps.EqualFunc(u, after, slices.Equal) {
		if err := n.setHooks(ctx, c, u, down); err != nil {
			return err
		}
	}
	return n.setHooks(ctx, c, after, down)
}

// stop removes this cut, and only it: the other targeted faults' cuts stay.
func (n *netCut) stop(ctx context.Context, c *Cluster) error {
	var err error
	switch n.mech {
	case MechHooks:
		_, after := c.cutTable().swap(n.owner, nil)
		err = n.setHooks(ctx, c, after, nil)
	case MechIPTables:
		c.ruleTable().drop(n)
		err = n.setIPTables(ctx, c, n.active, nil)
	}
	n.mech, n.active = "", nil
	return err
}

// heal removes every cut of the targeted faults from every node, on every
// mechanism, whoever made it, and forgets them.
func (n *netCut) heal(ctx context.Context, c *Cluster) error {
	c.ruleTable().dropIf(func(o any) bool { _, cut := o.(*netCut); return cut })
	var errs []error
	for _, node := range c.Nodes {
		if r := c.Remotes[node.Name]; r != nil {
			if err := hostcmd.HealChains(ctx, control.NetSide(r), hostcmd.InInput(hostcmd.TargetChain)); err != nil {
				errs = append(errs, fmt.Errorf("%s: cut: %w", node.Name, err))
			}
		}
		if hooked(c, node.Name) {
			if err := c.Hooks.ClearDropList(ctx, node.Name); err != nil {
				errs = append(errs, fmt.Errorf("cut: %w", err))
			}
		}
	}
	c.cutTable().clear()
	n.mech, n.active = "", nil
	return errors.Join(errs...)
}

// setHooks sets every node's drop list to g (nodes without a grudge get
// an empty one), except the nodes in down.
func (n *netCut) setHooks(ctx context.Context, c *Cluster, g Grudge, down []string) error {
	for _, node := range c.Nodes {
		if slices.Contains(down, node.Name) {
			continue
		}
		drop := g[node.Name]
		err := setDropList(ctx, c, node.Name, drop)
		if err != nil && (len(drop) > 0 || !nothingToHeal(err)) {
			// A node that does not run has no drop list to empty.
			return fmt.Errorf("cut: %w", err)
		}
	}
	return nil
}

// setIPTables adds the rules of the links g cuts and old does not, then
// deletes those of the links old cuts and g does not, host by host; then
// g's rules are this cut's rules in force (see net_reapply.go).
func (n *netCut) setIPTables(ctx context.Context, c *Cluster, old, g Grudge) error {
	ips, err := hostcmd.NodeIPs(ctx, c.Nodes)
	if err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	if err := n.changeIPTables(ctx, c, old, g, ips); err != nil {
		return err
	}
	inForce := map[string][]nodeRule{}
	for _, node := range c.Nodes {
		if len(g[node.Name]) == 0 {
			continue
		}
		cmds := hostcmd.InInput(hostcmd.TargetChain).EnsureCmds()
		for _, peer := range g[node.Name] {
			cmds = append(cmds, hostcmd.DropCmd(hostcmd.TargetChain, ips[peer], ips[node.Name], 1))
		}
		inForce[node.Name] = []nodeRule{runRule("cut", cmds)}
	}
	c.ruleTable().set(n, inForce)
	return nil
}

// changeIPTables is setIPTables's change on the hosts.
func (n *netCut) changeIPTables(ctx context.Context, c *Cluster, old, g Grudge, ips map[string]netip.Addr) error {
	for _, phase := range []struct {
		from, minus Grudge
		op          string
	}{{g, old, "-A"}, {old, g, "-D"}} {
		for _, node := range c.Nodes {
			var cmds []string
			for _, peer := range phase.from[node.Name] {
				if !slices.Contains(phase.minus[node.Name], peer) {
					rule := hostcmd.DropCmd(hostcmd.TargetChain, ips[peer], ips[node.Name], 1)
					cmds = append(cmds, strings.Replace(rule, " -A ", " "+phase.op+" ", 1))
				}
			}
			if len(cmds) == 0 {
				continue
			}
			if phase.op == "-A" {
				cmds = append(hostcmd.InInput(hostcmd.TargetChain).EnsureCmds(), cmds...)
			}
			r, err := netRemote(c, node)
			if err != nil {
				return fmt.Errorf("cut: %w", err)
			}
			if err := applyNow(ctx, r, runRule("cut", cmds)); err != nil {
				return fmt.Errorf("%s: %w", node.Name, err)
			}
		}
	}
	return nil
}

// value is the cut as op values record it: the grudge (nodes that drop
// nothing left out) and the mechanism.
func (n *netCut) value() faultrec.Partition {
	return partitionValue(n.active, n.mech)
}

// unionGrudge cuts every link a or b cuts.
func unionGrudge(a, b Grudge) Grudge {
	out := Grudge{}
	for _, g := range []Grudge{a, b} {
		for node, peers := range g {
			out[node] = append(out[node], peers...)
		}
	}
	return out.Symmetric()
}

// sides cuts the nodes of a off from those of b, both ways.
func sides(a, b []string) Grudge {
	return grudgeOf(slices.Clone(a), slices.Clone(b))
}
