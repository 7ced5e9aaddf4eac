package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"errors"
	"fmt"
	"sync"

	"chaos/db"
	"chaos/history"
)

// What an earlier run left. A controller killed mid-run (SIGKILL, a
// crash, a lost machine) heals nothing: its nodes run on, perhaps paused,
// and its iptables chains, tc qdiscs and system clock stay as they were.
// The chains are reused by name, so a new run that does not remove them
// first runs with the old DROP rules in place. HealLeftovers is what a
// run's setup does about it, once, before the load.

// leftoverFinder is a Fault whose Heal leaves a trace on a host that can
// be listed before it is removed.
type leftoverFinder interface {
	// leftovers names what the family's Heal would remove from n's host,
	// in a few words each; none when the host is clean. It changes
	// nothing.
	leftovers(ctx context.Context, c *Cluster, n db.Node) ([]string, error)
}

// HealLeftovers removes from every node's host what an earlier run may
// have left there, and says what it found. It is for the setup of a run,
// before the nodes are deployed: it stops each node's process that still
// runs (paused or not) when the system can name it (the Processes capability), then
// runs the Heal of every family (HealFaults) on each node, so that it
// removes whatever `chaos heal` would. The node processes are stopped
// first because the state chaos-node's fault hooks hold (clock skews, drop
// lists, message faults, append limits) and a membership changed by a
// fault live in them: with the processes gone there is none, and the hooks
// are not asked.
//
// sharedHost says that the nodes share one host (local mode). Nodes on one
// host, as sharedHost or their addresses say, are handled one at a time,
// so that what one node's heal removed the next does not find again, nor
// race to remove; nodes on different hosts are handled at once, each with
// faults of its own (a Fault serializes its calls): a heal costs a few
// SSH commands per node.
//
// The Op is a heal op whose value is a LeftoversValue, or the zero Op when
// nothing was found. The error joins those of the nodes that could not be
// checked or healed, in the nodes' order; the Op still names what was
// found.
func HealLeftovers(ctx context.Context, c *Cluster, sharedHost bool) (Op, error) {
	found := make([][]string, len(c.Nodes))
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for _, group := range hostGroups(c.Nodes, sharedHost) {
		wg.Go(func() {
			for _, i := range group {
				found[i], errs[i] = healNodeLeftovers(ctx, c, c.Nodes[i], HealFaults(c.SharedClock))
			}
		})
	}
	wg.Wait()
	v := faultrec.Heal{Leftovers: map[string][]string{}}
	for i, n := range c.Nodes {
		if len(found[i]) > 0 {
			v.Leftovers[n.Name] = found[i]
		}
	}
	if len(v.Leftovers) == 0 {
		return Op{}, errors.Join(errs...)
	}
	return Op{F: history.FHeal, Value: v}, errors.Join(errs...)
}

// hostGroups are the indexes of nodes grouped by host, in order: one
// group when they share one host, else one per address.
func hostGroups(nodes []db.Node, sharedHost bool) [][]int {
	var groups [][]int
	at := map[string]int{}
	for i, n := range nodes {
		key := n.Addr
		if sharedHost {
			key = ""
		}
		g, ok := at[key]
		if !ok {
			g = len(groups)
			at[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// healNodeLeftovers finds what is left on n's host, then stops n's
// process and heals n with faults. A failure to look does not keep it from
// healing: the error joins both.
func healNodeLeftovers(ctx context.Context, c *Cluster, n db.Node, faults []Fault) ([]string, error) {
	v := only(c, n)
	var what []string
	var errs []error
	proc, procErr := leftoverProcess(ctx, v, n)
	if proc != "" {
		what = append(what, proc)
	}
	errs = append(errs, procErr)
	for _, f := range faults {
		if lf, ok := f.(leftoverFinder); ok {
			w, err := lf.leftovers(ctx, v, n)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", n.Name, f.Name(), err))
			}
			what = append(what, w...)
		}
	}
	if c.Processes != nil && procErr == nil {
		if proc != "" {
			if err := c.DB.Stop(ctx, v.Remotes[n.Name], n); err != nil {
				return what, errors.Join(append(errs, err)...)
			}
		}
		v.Hooks = nil // no process, no hook state
	}
	return what, errors.Join(append(errs, HealAll(ctx, v, faults))...)
}

// leftoverProcess names n's process when one runs ("etcd process 4242,
// paused"), or "" when none does or the system cannot say.
func leftoverProcess(ctx context.Context, c *Cluster, n db.Node) (string, error) {
	pf := c.Processes
	if pf == nil {
		return "", nil
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return "", err
	}
	p, err := pf.Process(ctx, r, n)
	switch {
	case err != nil:
		return "", err
	case p.Pid == 0:
		return "", nil
	case p.Stopped:
		return fmt.Sprintf("%s process %d, paused", c.DB.Name(), p.Pid), nil
	}
	return fmt.Sprintf("%s process %d, running", c.DB.Name(), p.Pid), nil
}
