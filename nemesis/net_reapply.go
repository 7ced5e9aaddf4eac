package nemesis

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"chaos/control"
	"chaos/db"
	"chaos/nemesis/hostcmd"
)

// Network faults outlive the processes they act on, but not always the
// network namespace they live in: a container that is the node (see
// db.ContainerNodes) gets a new namespace each time it starts again, and
// the rules and qdiscs of the faults in force on it are gone, while the
// history says they hold. So each network fault, once in force, leaves in
// the cluster's rule table what puts its part on each node's namespace; a
// restart of a node whose host is a container (restartNode) does it again
// there when it finds none of chaos's rules left. A fault that starts
// while such a container is stopped (killed) defers its part there to the
// restart the same way (applyNow).

// nodeRule puts one part of a network fault on a node's network
// namespace, through r: the node's Remote, or its network side
// (control.NetSide, which a rule takes of r again: it is idempotent).
type nodeRule func(ctx context.Context, r control.Remote) error

// runRule is the nodeRule that runs cmds in order on the network side
// (hostcmd.Run, what naming them in errors).
func runRule(what string, cmds []string) nodeRule {
	return func(ctx context.Context, r control.Remote) error {
		return hostcmd.Run(ctx, control.NetSide(r), what, cmds)
	}
}

// applyNow puts rule on r's host now, unless it is a stopped container
// (see hostcmd.Stopped): then its namespace is gone, and the rule goes on
// the new one when the container starts again (reapplyNet).
func applyNow(ctx context.Context, r control.Remote, rule nodeRule) error {
	if err := rule(ctx, r); err != nil && !hostcmd.Stopped(err) {
		return err
	}
	return nil
}

// ruleTable holds the rules of the network faults in force, by owner
// (the fault's value: a *Partition, *Packet or *netCut) and node. Its
// lock is held while a restarted node's rules are put back, so that an
// owner that forgets its rules (drop) before healing them never has them
// put back behind its heal.
type ruleTable struct {
	mu    sync.Mutex
	rules map[any]ownerRules
	next  int
	// reapplied is what each node's last restart put back (reapplyNet),
	// until take: a restart whose caller takes nothing (a heal's) is
	// replaced by the next, never reported with it.
	reapplied map[string][]string
}

// take returns what reapplyNet put back on nodes since the last take, by
// node (nil when nothing), and forgets it.
func (t *ruleTable) take(nodes []string) map[string][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out map[string][]string
	for _, n := range nodes {
		if what := t.reapplied[n]; len(what) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[n] = what
			delete(t.reapplied, n)
		}
	}
	return out
}

// ownerRules are one owner's rules by node, in the order they go on, and
// when the owner first set them: a restart puts the owners' rules back in
// that order, so that the namespace's chains come back in the order they
// were made.
type ownerRules struct {
	seq    int
	byNode map[string][]nodeRule
}

// set makes rules (node -> rules, put on its network side in order)
// owner's rules, replacing what it had; nodes with no rules are left
// out, and an owner with none is forgotten.
func (t *ruleTable) set(owner any, rules map[string][]nodeRule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := map[string][]nodeRule{}
	for n, c := range rules {
		if len(c) > 0 {
			kept[n] = c
		}
	}
	if len(kept) == 0 {
		delete(t.rules, owner)
		return
	}
	if t.rules == nil {
		t.rules = map[any]ownerRules{}
	}
	old, ok := t.rules[owner]
	if !ok {
		old.seq = t.next
		t.next++
	}
	t.rules[owner] = ownerRules{seq: old.seq, byNode: kept}
}

// drop forgets owner's rules; it waits for a restart putting them back.
func (t *ruleTable) drop(owner any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.rules, owner)
}

// dropIf forgets the rules of every owner match accepts.
func (t *ruleTable) dropIf(match func(owner any) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for o := range t.rules {
		if match(o) {
			delete(t.rules, o)
		}
	}
}

// chaosNetState is every chain chaos's network faults make; with the root
// qdiscs (hostcmd.NetemLeftovers) it is what a namespace that kept chaos's
// rules holds.
var chaosNetState = []hostcmd.Chain{
	hostcmd.InInput(hostcmd.PartitionChain), hostcmd.InInput(hostcmd.TargetChain),
	hostcmd.InInput(hostcmd.PacketChain), hostcmd.TeeChain(), hostcmd.ProxyChain(),
}

// reapplyNet puts back, on n's network namespace, the rules of the
// network faults in force on it, when n's host is a container and none of
// chaos's chains and qdiscs is left there: its namespace is a new one (a
// container that is the node was started again). Hosts that are not
// containers keep their namespace across restarts and are not asked. It
// returns the names of what it put back ("partition", "packet", "cut").
func (c *Cluster) reapplyNet(ctx context.Context, r control.Remote, n db.Node) ([]string, error) {
	if _, ok := control.ContainerOf(r); !ok {
		return nil, nil
	}
	t := c.ruleTable()
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.reapplied, n.Name) // what take reports is this restart's alone
	var owners []any
	for o, rs := range t.rules {
		if len(rs.byNode[n.Name]) > 0 {
			owners = append(owners, o)
		}
	}
	if len(owners) == 0 {
		return nil, nil
	}
	slices.SortFunc(owners, func(a, b any) int { return t.rules[a].seq - t.rules[b].seq })
	if kept, err := netStateLeft(ctx, control.NetSide(r)); err != nil || kept {
		return nil, err
	}
	var done []string
	for _, o := range owners {
		what := ownerName(o)
		for _, rule := range t.rules[o].byNode[n.Name] {
			if err := rule(ctx, r); err != nil {
				return done, fmt.Errorf("%s: after its restart: re-apply %s: %w", n.Name, what, err)
			}
		}
		done = append(done, what)
	}
	if t.reapplied == nil {
		t.reapplied = map[string][]string{}
	}
	t.reapplied[n.Name] = done
	return done, nil
}

// netStateLeft reports whether any of chaos's chains or root qdiscs is on
// r's network namespace.
func netStateLeft(ctx context.Context, r control.Remote) (bool, error) {
	chains, err := hostcmd.ChainsLeft(ctx, r, chaosNetState...)
	if err != nil || len(chains) > 0 {
		return len(chains) > 0, err
	}
	roots, err := hostcmd.NetemLeftovers(ctx, r)
	return len(roots) > 0, err
}

// ownerName names an owner of the rule table as ops and errors do.
func ownerName(o any) string {
	switch o.(type) {
	case *Partition:
		return "partition"
	case *Packet:
		return "packet"
	case *netCut:
		return "cut"
	}
	return fmt.Sprintf("%T", o)
}

// ruleTable returns c's table of network rules in force, making it the
// first time: NewCluster makes it, so that copies of the Cluster share it.
func (c *Cluster) ruleTable() *ruleTable {
	if c.rules == nil {
		c.rules = &ruleTable{}
	}
	return c.rules
}
