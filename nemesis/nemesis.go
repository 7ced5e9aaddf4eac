// Package nemesis injects real faults into a cluster under test (kill,
// pause, partition, packet, clock), composes them on a seeded schedule,
// records every transition in the history, and always heals.
//
// Each fault family lives in a file of its own behind the Fault interface
// and acts through control.Remote, so the same code runs over SSH and
// locally.
package nemesis

import (
	"context"
	"math/rand/v2"

	"chaos/control"
	"chaos/db"
	"chaos/node/eventlog"
)

// Cluster is what faults act on.
type Cluster struct {
	Nodes []db.Node
	// Remotes reach each node's host, by node name.
	Remotes map[string]control.Remote
	DB      db.DB
	// HookAddrs are the client addresses of nodes that answer chaos-node's
	// fault hooks (--enable-fault-hooks), by node name; empty for systems
	// without hooks (etcd).
	HookAddrs map[string]string
	// Leader returns the name of the current leader, or an error when none
	// is known. Faults that target "the leader" use it.
	Leader func(ctx context.Context) (string, error)
	// SharedClock is true when the nodes' hosts share the controller's
	// clock (local mode and the testbed): the system clock strategy must
	// never run there.
	SharedClock bool
	// States asks every node what it is (chaos-node's /status): role,
	// term, leader and log indexes, by node name, for the nodes that
	// answered; nil for a system that cannot say. The targeted faults
	// find their roles with it (a new leader, a follower that is behind).
	States func(ctx context.Context) (map[string]NodeState, error)
	// Events returns the newest events of node's event log (chaos-node's
	// events.jsonl), oldest first, from its host; nil for a system without
	// event logs. The targeted faults watch it for votes and leaders.
	Events func(ctx context.Context, node string) ([]eventlog.Event, error)

	// FaultProxy says where chaos's fault proxy runs on the hosts, for
	// the packet fault's proxy mechanism (see proxy.go); nil leaves that
	// mechanism out.
	FaultProxy *FaultProxy

	// cuts are the targeted faults' cuts in place, which the nodes' drop
	// lists hold the union of (see netCut); the first cut makes it (the
	// schedule runs one fault at a time), and copies of the Cluster made
	// after share it.
	cuts *cutTable
}

// cutTable returns c's table of targeted cuts, making it the first time.
func (c *Cluster) cutTable() *cutTable {
	if c.cuts == nil {
		c.cuts = &cutTable{}
	}
	return c.cuts
}

// Op is a fault transition as the history records it: F is the nemesis
// op name of docs/FORMATS.md (start-partition, kill, clock-bump, ...) and Value
// its targets and the mechanism used.
type Op struct {
	F     string
	Value any
}

// Fault is one family of faults. At most one fault of a family is active
// at a time.
type Fault interface {
	// Name is the family: kill, pause, partition, clock or packet.
	Name() string
	// Available reports why this environment cannot perform the family,
	// or nil when it can. It changes nothing on the hosts.
	Available(ctx context.Context, c *Cluster) error
	// Start injects a fault of the family, choosing targets with rng, and
	// returns what it did.
	Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error)
	// Stop ends the family's active fault and returns what it did.
	Stop(ctx context.Context, c *Cluster) (Op, error)
	// Heal removes everything this family can leave on every node, whether
	// or not this process injected it (chaos heal uses it after a
	// controller crash). It is idempotent.
	Heal(ctx context.Context, c *Cluster) error
}

// OneShot marks a Fault whose Start, when it succeeds, has run a whole
// sequence and left nothing in place (lease, vote-restart, figure8,
// leader-cycle). The schedule stops it right away: its start and stop
// ops bound the sequence in the history, and its next pick starts it
// again instead of spending a transition on a Stop with nothing to undo.
type OneShot interface {
	Fault
	OneShot()
}

// isOneShot reports whether f is a OneShot, or wraps one: a Fault that
// wraps another (a campaign's tracking, say) has an Unwrap method
// returning it.
func isOneShot(f Fault) bool {
	for {
		if _, ok := f.(OneShot); ok {
			return true
		}
		w, ok := f.(interface{ Unwrap() Fault })
		if !ok {
			return false
		}
		f = w.Unwrap()
	}
}
