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
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/eventlog"
)

// Cluster is what faults act on: the nodes, their hosts, and the system's
// capabilities (db.Capabilities) as the families use them. NewCluster
// makes one from a system; a capability the system lacks is nil here, and
// the families that need it fall back or say which one is missing (see
// requireRoles).
type Cluster struct {
	Nodes []db.Node
	// Remotes reach each node's host, by node name.
	Remotes map[string]control.Remote
	DB      db.DB
	// Leader returns the name of the current leader, or an error when none
	// is known; nil for a system that cannot say (no Leader capability).
	// Faults that target "the leader" use it.
	Leader func(ctx context.Context) (string, error)
	// SharedClock is true when the nodes' hosts share the controller's
	// clock (local mode and the testbed): the system clock strategy must
	// never run there.
	SharedClock bool
	// States asks every node what it is (db.NodeState: role, term, leader,
	// and what else the system exposes), by node name, for the nodes that
	// answered; nil for a system that cannot say (no States capability).
	// The targeted faults find their roles with it (a new leader, a
	// follower that is behind, a node that just voted).
	States func(ctx context.Context) (map[string]db.NodeState, error)
	// Events returns the newest events of node's event log (chaos's
	// events.jsonl format), oldest first, from its host; nil for a system
	// without event logs (no Events capability). The targeted faults watch
	// it for votes.
	Events func(ctx context.Context, node string) ([]eventlog.Event, error)
	// Hooks are the fault hooks inside the node processes; nil for a
	// system without them (no Hooks capability).
	Hooks db.Hooks
	// Timing is the system's timing, which the targeted faults scale
	// their waits and delays to; zero fields are db.DefaultTiming's.
	Timing db.Timing
	// Write writes value to key at node through the system's own client,
	// and returns once the node answered (or ctx ended); nil when there is
	// no client (chaos heal). figure8 appends entries with it.
	Write func(ctx context.Context, node, key string, value int64) error

	// Storage places each node's data directory and says whether it is
	// served through the fault file system (db.Capabilities.Storage); nil
	// for a system whose data directory chaos does not know. The storage
	// families (see storage.go) need it served.
	Storage db.Storage
	// Membership changes the system's membership at run time
	// (db.Capabilities.Membership); nil for a system that cannot. The
	// member family needs it.
	Membership db.Membership
	// FakeClocks starts the nodes under fake clocks and names their
	// control files (db.Capabilities.FakeClocks); nil for a system that
	// cannot. The faketime clock strategy needs it; the heals reset the
	// control files only where it is set.
	FakeClocks db.FakeClocker
	// Processes names the process that runs a node
	// (db.Capabilities.Processes); nil for a system that cannot say. The
	// heals use it to name and stop what an earlier run left; without it
	// a node is taken to run.
	Processes db.ProcessFinder
	// Peers says where a node's peers reach it (db.Capabilities.Peers);
	// nil for a system that does not say. The fault proxy intercepts the
	// peer and client ports where it is set, every TCP port otherwise.
	Peers db.PeerAddresser
	// Clocks shows each node's clock as the system tells it
	// (db.Capabilities.Clocks); nil for a system that does not say. The
	// clock family records what it showed after a fault.
	Clocks db.ClockReader

	// FaultProxy says where chaos's fault proxy runs on the hosts, for
	// the packet fault's proxy mechanism (see net_proxy.go); nil leaves that
	// mechanism out.
	FaultProxy *FaultProxy
	// VDSOClock says where the vdso clock strategy's tool runs on the
	// hosts (see clock_vdso.go); nil leaves that strategy out.
	VDSOClock *VDSOClock

	// cuts are the targeted faults' cuts in place, which the nodes' drop
	// lists hold the union of (see netCut); the first cut makes it (the
	// schedule runs one fault at a time), and copies of the Cluster made
	// after share it.
	cuts *cutTable
	// skews are the vdso clock faults in effect, by node, which a
	// restarted node's new process gets again (see clock_vdso.go); shared
	// like cuts.
	skews *skewTable
	// rules are the commands of the network faults in force, which a node
	// restarted in a new network namespace gets again (see
	// net_reapply.go); shared like cuts.
	rules *ruleTable
}

// skewTable returns c's table of vdso clock faults, making it the first
// time: NewCluster makes it, and a caller about to set faults from
// several goroutines calls it first.
func (c *Cluster) skewTable() *skewTable {
	if c.skews == nil {
		c.skews = &skewTable{skews: map[string]vdsoSkew{}}
	}
	return c.skews
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
// its targets and the mechanism used. The families of the registry give
// Value a fault record of package faultrec (faultrec.Decode's type for F),
// which readers of the history decode with the same type; Value stays any
// so that a Fault of another package may record an op of its own.
type Op struct {
	F     string
	Value any
}

// Fault is one family of faults. At most one fault of a family is active
// at a time.
type Fault interface {
	// Name is the family, as the registry names it (kill, pause, ...).
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
	// Budget is how long the sequence takes on c at most when the cluster
	// behaves (a leader is elected within a few election timeouts, nodes
	// restart within a few seconds): the schedule starts it only where
	// that much of the fault window is left, so that it is not cut short
	// at the deadline.
	Budget(c *Cluster) time.Duration
}

// oneShotOf is f as a OneShot, or the OneShot it wraps: a Fault that
// wraps another (a campaign's tracking, say) has an Unwrap method
// returning it.
func oneShotOf(f Fault) (OneShot, bool) {
	for {
		if o, ok := f.(OneShot); ok {
			return o, true
		}
		w, ok := f.(interface{ Unwrap() Fault })
		if !ok {
			return nil, false
		}
		f = w.Unwrap()
	}
}

// isOneShot reports whether f is a OneShot, or wraps one.
func isOneShot(f Fault) bool {
	_, ok := oneShotOf(f)
	return ok
}
