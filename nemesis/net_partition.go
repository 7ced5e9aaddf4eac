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
	"chaos/history"
	"chaos/history/faultrec"
	"chaos/nemesis/hostcmd"
)

// Partition cuts the network between nodes along a Grudge (see Topology).
// Cuts go both ways. Where every node's host can run iptables (root), each
// node drops, in INPUT, the packets from the nodes it holds a grudge
// against; where not, but every node answers chaos-node's fault hooks, each
// node's transport drops them in-process instead. The op value is the
// grudge, plus "mechanism": "iptables" or "hooks".
//
// A Partition keeps what it probed and the active fault; use one value
// for the whole run. Its methods are safe for concurrent use.
type Partition struct {
	// Topologies are what Start picks among, uniformly; empty means
	// AllTopologies.
	Topologies []Topology
	// Mechanism forces MechIPTables or MechHooks; empty picks iptables
	// where every host can use it, else hooks.
	Mechanism string

	caps netCapsCache

	mu     sync.Mutex
	active *partitionActive
}

// partitionActive is the partition Start injected and Stop has not yet
// healed.
type partitionActive struct {
	grudge    Grudge
	mechanism string
}

// Name is "partition".
func (p *Partition) Name() string { return "partition" }

// Available reports why no mechanism can partition this cluster, or nil.
// It probes the hosts (see ProbeNet) but changes nothing.
func (p *Partition) Available(ctx context.Context, c *Cluster) error {
	_, err := p.Choose(ctx, c)
	return err
}

// Choose returns the mechanism Start uses on c, MechIPTables or MechHooks,
// or an error saying why neither can: which node lacks what.
func (p *Partition) Choose(ctx context.Context, c *Cluster) (string, error) {
	if len(c.Nodes) < 2 {
		return "", fmt.Errorf("partition: needs at least 2 nodes, the cluster has %d", len(c.Nodes))
	}
	nodes := partitionNames(c.Nodes)
	hooks := netHooksMissing(c, nodes)
	switch p.Mechanism {
	case MechHooks:
		if hooks != nil {
			return "", fmt.Errorf("partition by hooks: %w", hooks)
		}
		return MechHooks, nil
	case MechIPTables, "":
	default:
		return "", fmt.Errorf("partition: unknown mechanism %q (want %s or %s)", p.Mechanism, MechIPTables, MechHooks)
	}
	caps, err := p.caps.get(ctx, c)
	if err != nil {
		return "", fmt.Errorf("partition: %w", err)
	}
	ipt := netFirstErr(nodes, caps, func(nc NetCaps) error { return nc.IPTables })
	switch {
	case ipt == nil:
		return MechIPTables, nil
	case p.Mechanism == MechIPTables:
		return "", fmt.Errorf("partition by iptables: %w", ipt)
	case hooks == nil:
		return MechHooks, nil
	}
	return "", fmt.Errorf("partition: iptables is unusable (%w) and there are no fault hooks to fall back on (%w)", ipt, hooks)
}

// Start cuts the network along a grudge of a topology chosen with rng and
// returns start-partition with the grudge and the mechanism. It fails when
// a partition is active already. When a node refuses its part, Start
// heals what it did and returns the error.
func (p *Partition) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active != nil {
		return Op{}, errors.New("partition: a partition is active already; stop it first")
	}
	mech, err := p.Choose(ctx, c)
	if err != nil {
		return Op{}, err
	}
	g, err := p.grudge(ctx, c, rng)
	if err != nil {
		return Op{}, fmt.Errorf("partition: %w", err)
	}
	apply := p.applyIPTables
	if mech == MechHooks {
		apply = p.applyHooks
	}
	if err := apply(ctx, c, g); err != nil {
		return Op{}, errors.Join(err, p.heal(ctx, c, mech))
	}
	p.active = &partitionActive{grudge: g, mechanism: mech}
	return Op{F: history.FStartPartition, Value: partitionValue(g, mech)}, nil
}

// Stop heals the partition and returns stop-partition with the grudge it
// healed (empty when none was active). It undoes only the active fault's
// mechanism, so a node another fault paused does not hold up the removal
// of iptables rules; with no fault active it removes everything Heal does.
func (p *Partition) Stop(ctx context.Context, c *Cluster) (Op, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	value, mech := faultrec.Partition{}, ""
	if p.active != nil {
		value, mech = partitionValue(p.active.grudge, p.active.mechanism), p.active.mechanism
	}
	c.ruleTable().drop(p)
	if err := p.heal(ctx, c, mech); err != nil {
		return Op{F: history.FStopPartition, Value: value}, err
	}
	p.active = nil
	return Op{F: history.FStopPartition, Value: value}, nil
}

// Heal removes chaos's partition chain and the targeted faults' cut chain
// (see netCut), with their jumps, from every node's host and clears every
// node's hook drop list: every cut chaos can leave. Nodes that are down
// have no drop list to clear. Idempotent; it reaches every node even when
// some fail, and returns their errors joined.
func (p *Partition) Heal(ctx context.Context, c *Cluster) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.ruleTable().dropIf(func(o any) bool {
		_, cut := o.(*netCut)
		return o == p || cut
	})
	if err := p.heal(ctx, c, "", hostcmd.PartitionChain, hostcmd.TargetChain); err != nil {
		return err
	}
	p.active = nil
	return nil
}

// leftovers names the partition and cut chains on n's host (see
// leftoverFinder); the drop lists live in the node processes.
func (p *Partition) leftovers(ctx context.Context, c *Cluster, n db.Node) ([]string, error) {
	r, err := netRemote(c, n)
	if err != nil {
		return nil, err
	}
	return hostcmd.ChainsLeft(ctx, r, hostcmd.InInputs(hostcmd.PartitionChain, hostcmd.TargetChain)...)
}

// heal undoes what mechanism mech can leave on every node, removing chains
// (default: the partition chain) for iptables; "" means every mechanism.
func (p *Partition) heal(ctx context.Context, c *Cluster, mech string, chains ...string) error {
	if len(chains) == 0 {
		chains = []string{hostcmd.PartitionChain}
	}
	var errs []error
	for _, n := range c.Nodes {
		if r := c.Remotes[n.Name]; r != nil && mech != MechHooks {
			if err := hostcmd.HealChains(ctx, control.NetSide(r), hostcmd.InInputs(chains...)...); err != nil {
				errs = append(errs, fmt.Errorf("%s: partition: %w", n.Name, err))
			}
		}
		if hooked(c, n.Name) && mech != MechIPTables {
			if err := c.Hooks.ClearDropList(ctx, n.Name); err != nil {
				errs = append(errs, fmt.Errorf("partition: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// grudge draws a topology and its grudge with rng.
func (p *Partition) grudge(ctx context.Context, c *Cluster, rng *rand.Rand) (Grudge, error) {
	topologies := p.Topologies
	if len(topologies) == 0 {
		topologies = AllTopologies()
	}
	nodes := partitionNames(c.Nodes)
	switch t := topologies[rng.IntN(len(topologies))]; t {
	case IsolateOne:
		return grudgeIsolate(nodes, nodes[rng.IntN(len(nodes))]), nil
	case IsolateLeader:
		leader := partitionLeader(ctx, c, nodes)
		if leader == "" {
			leader = nodes[rng.IntN(len(nodes))]
		}
		return grudgeIsolate(nodes, leader), nil
	case Halves:
		return grudgeHalves(nodes, rng)
	case MajoritiesRing:
		return grudgeMajoritiesRing(nodes, rng)
	case Bridge:
		return grudgeBridge(nodes, rng)
	default:
		return nil, fmt.Errorf("unknown topology %q", t)
	}
}

// partitionLeader is the leader's name, or "" when Cluster.Leader is nil,
// fails, or names no node of the cluster.
func partitionLeader(ctx context.Context, c *Cluster, nodes []string) string {
	if c.Leader == nil {
		return ""
	}
	name, err := c.Leader(ctx)
	if err != nil || !slices.Contains(nodes, name) {
		return ""
	}
	return name
}

// applyIPTables makes each node with a grudge drop, in INPUT, the packets
// from the nodes it holds it against: -s peer -d self, in chaos's chain.
// Nodes go one after the other, so nodes that share a host never race on
// its chain. Once every node has its rules, they are c's rules in force
// (see net_reapply.go).
func (p *Partition) applyIPTables(ctx context.Context, c *Cluster, g Grudge) error {
	ips, err := hostcmd.NodeIPs(ctx, c.Nodes)
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	applied := map[string][]nodeRule{}
	for _, n := range c.Nodes {
		if len(g[n.Name]) == 0 {
			continue
		}
		r, err := netRemote(c, n)
		if err != nil {
			return fmt.Errorf("partition: %w", err)
		}
		cmds := hostcmd.InInput(hostcmd.PartitionChain).EnsureCmds()
		for _, peer := range g[n.Name] {
			cmds = append(cmds, hostcmd.DropCmd(hostcmd.PartitionChain, ips[peer], ips[n.Name], 1))
		}
		rule := runRule("partition", cmds)
		if err := applyNow(ctx, r, rule); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		applied[n.Name] = []nodeRule{rule}
	}
	c.ruleTable().set(p, applied)
	return nil
}

// applyHooks sets every node's in-process drop list to its grudge (empty
// for nodes without one, which also clears a stale list).
func (p *Partition) applyHooks(ctx context.Context, c *Cluster, g Grudge) error {
	for _, n := range c.Nodes {
		if err := setDropList(ctx, c, n.Name, g[n.Name]); err != nil {
			return fmt.Errorf("partition: %w", err)
		}
	}
	return nil
}

// partitionValue is the op value: the grudge (nodes that drop nothing left
// out) and the mechanism.
func partitionValue(g Grudge, mech string) faultrec.Partition {
	v := faultrec.Partition{Mechanism: mech, Grudge: map[string][]string{}}
	for n, peers := range g {
		if len(peers) > 0 {
			v.Grudge[n] = slices.Clone(peers)
		}
	}
	return v
}

// partitionNames returns the nodes' names, in order.
func partitionNames(nodes []db.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// setDropList sets node's drop list through c's hooks; an error when
// the node has none.
func setDropList(ctx context.Context, c *Cluster, node string, drop []string) error {
	if !hooked(c, node) {
		return fmt.Errorf("%s: the node has no fault hooks", node)
	}
	return c.Hooks.SetDropList(ctx, node, drop)
}

// nothingToHeal reports whether a failed hook request that removes faults
// shows that the node has none: it does not run or runs without hooks
// (db.ErrNoHookState).
func nothingToHeal(err error) bool { return errors.Is(err, db.ErrNoHookState) }
