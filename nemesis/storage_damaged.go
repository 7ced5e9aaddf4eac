package nemesis

import (
	"context"
	"math"
	"slices"
	"sync"

	"chaos/db"
)

// damagedSet is the nodes a corruption damaged and brought back that have
// not yet been seen caught up: each may have lost records it had
// acknowledged, which the others must still hold, so each counts against
// the minority the corrupt family may damage until a state shows it has
// caught up (it no longer abstains, and its commit index reached the
// furthest log end any node reported when it came back). A system
// without states never shows that: its damaged nodes count for the rest
// of the run.
//
// damagedSet is safe for concurrent use.
type damagedSet struct {
	mu     sync.Mutex
	target map[string]uint64 // node -> the commit index it must reach
}

// add records that nodes came back damaged, with st the states sampled
// after they did (nil: none).
func (d *damagedSet) add(nodes []db.Node, st map[string]db.NodeState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.target == nil {
		d.target = map[string]uint64{}
	}
	target := uint64(math.MaxUint64)
	if st != nil {
		target = 0
		for _, s := range st {
			target = max(target, s.LogEnd())
		}
	}
	for _, n := range nodes {
		d.target[n.Name] = target
	}
}

// refresh forgets the nodes that states show caught up, and returns the
// names of those still damaged, sorted.
func (d *damagedSet) refresh(ctx context.Context, c *Cluster) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.target) > 0 {
		st := sampleStates(ctx, c) // a node that does not answer stays damaged
		for name, target := range d.target {
			if s, ok := st[name]; ok && !s.Abstaining && s.Commit >= target {
				delete(d.target, name)
			}
		}
	}
	var names []string
	for name := range d.target {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// sampleStates returns c's states, or nil when it has none or they fail.
func sampleStates(ctx context.Context, c *Cluster) map[string]db.NodeState {
	if c.States == nil {
		return nil
	}
	st, err := c.States(ctx)
	if err != nil || len(st) == 0 {
		return nil
	}
	return st
}
