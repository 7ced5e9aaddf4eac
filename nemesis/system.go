package nemesis

import (
	"context"
	"fmt"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/eventlog"
)

// NewCluster is the nemesis's view of system d on nodes, whose hosts
// remotes reach: its capabilities (db.CapabilitiesOf) as Cluster's
// fields. sharedClock says the hosts share the controller's clock. Write
// is left for the caller that has the system's clients.
func NewCluster(d db.DB, nodes []db.Node, remotes map[string]control.Remote, sharedClock bool) *Cluster {
	caps := db.CapabilitiesOf(d)
	c := &Cluster{Nodes: nodes, Remotes: remotes, DB: d, SharedClock: sharedClock, Hooks: caps.Hooks, Timing: caps.Timing,
		Storage: caps.Storage, Membership: caps.Membership, FakeClocks: caps.FakeClocks, Processes: caps.Processes,
		Peers: caps.Peers, Clocks: caps.Clocks, skews: &skewTable{skews: map[string]vdsoSkew{}},
		rules: &ruleTable{}}
	if lf := caps.Leader; lf != nil {
		c.Leader = func(ctx context.Context) (string, error) { return lf.Leader(ctx, nodes) }
	}
	if sr := caps.States; sr != nil {
		c.States = func(ctx context.Context) (map[string]db.NodeState, error) { return sr.States(ctx, nodes) }
	}
	if el := caps.Events; el != nil {
		c.Events = func(ctx context.Context, node string) ([]eventlog.Event, error) {
			n, r, err := nodeAndRemote(c, node)
			if err != nil {
				return nil, err
			}
			evs, err := db.TailEvents(ctx, r, el.EventLog(n))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", node, err)
			}
			return evs, nil
		}
	}
	return c
}

// hooked reports whether node answers c's fault hooks.
func hooked(c *Cluster, node string) bool { return c.Hooks != nil && c.Hooks.Hooked(node) }

// timing is c's timing, with db.DefaultTiming's where it states none.
func (c *Cluster) timing() db.Timing { return c.Timing.WithDefaults() }

// electionOf is the election timeout d a family was given, or else c's.
func electionOf(c *Cluster, d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return c.timing().ElectionTimeout
}

// heartbeatOf is the heartbeat interval d a family was given, or else c's.
func heartbeatOf(c *Cluster, d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return c.timing().Heartbeat
}
