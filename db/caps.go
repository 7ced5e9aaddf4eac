package db

import (
	"context"
	"time"
)

// The capabilities of a system under test beyond DB: what the fault
// families and the checks may ask of it. A system declares them in one
// place, its Capabilities method; a capability it lacks is nil there, and
// callers fall back or say which one is missing. Callers never look at a
// system's concrete type, nor assert any interface on it: what is not a
// field of Capabilities (or a fact of its registry entry, cluster.System)
// is nothing a caller may ask of a system.

// Capabilities are what one system can do besides DB.
type Capabilities struct {
	// Leader says which node leads; nil when the system cannot say.
	Leader LeaderFinder
	// States asks the nodes what they are (role, term, leader, ...); nil
	// when the system cannot say.
	States StateReporter
	// Events finds each node's protocol event log (chaos's events.jsonl
	// format, eventlog); nil when the nodes keep none.
	Events EventLogs
	// Hooks are fault hooks inside the node processes; nil when the nodes
	// answer none.
	Hooks Hooks
	// Timing is the system's protocol timing (zero fields: DefaultTiming's).
	Timing Timing
	// Storage places each node's data directory, and says whether it is
	// served through the fault file system (storage faults); nil for a
	// system whose data directory chaos does not know.
	Storage Storage
	// Membership changes the cluster's membership at run time (the member
	// family); nil when the system cannot.
	Membership Membership
	// FakeClocks starts nodes under fake clocks and names their control
	// files (the faketime clock strategy, and the heals that reset those
	// files); nil when the system cannot.
	FakeClocks FakeClocker
	// Processes names the process that runs a node on its host (the heals
	// and a run's setup name and stop what an earlier run left); nil when
	// the system cannot say.
	Processes ProcessFinder
	// Peers says where a node's peers reach it (the fault proxy
	// intercepts that port and the client port only); nil when the system
	// does not say, and every TCP port between the nodes is intercepted.
	Peers PeerAddresser
	// Clocks shows each node's clock as the system itself tells it (the
	// clock family records what it showed after a fault); nil when the
	// system does not say.
	Clocks ClockReader
}

// Capable is a system that declares its Capabilities.
type Capable interface {
	// Capabilities are the system's, for every node of its configuration.
	Capabilities() Capabilities
}

// CapabilitiesOf returns d's capabilities, the zero Capabilities (with
// DefaultTiming) for a system that declares none; Timing's zero fields
// are filled in from DefaultTiming.
func CapabilitiesOf(d DB) Capabilities {
	var c Capabilities
	if cd, ok := d.(Capable); ok {
		c = cd.Capabilities()
	}
	c.Timing = c.Timing.WithDefaults()
	return c
}

// LeaderFinder is a system that can say which node leads.
type LeaderFinder interface {
	// Leader returns the name of the node the cluster reports as leader,
	// asking the nodes of nodes; an error when none reports one.
	Leader(ctx context.Context, nodes []Node) (string, error)
}

// Node roles, as NodeState.Role has them.
const (
	RoleLeader       = "leader"
	RoleFollower     = "follower"
	RoleCandidate    = "candidate"
	RolePreCandidate = "pre-candidate"
)

// NodeState is what a node reports of itself. Names (Leader, Vote) are
// node names, never a system's own ids. A field the system does not
// expose is its zero value: Role "" (etcd tells a leader from the others
// only), Vote "", LastIndex 0 (etcd reports its commit index only).
type NodeState struct {
	// Role is RoleLeader, RoleFollower, RoleCandidate, RolePreCandidate,
	// or "" when the node does not say.
	Role string `json:"role"`
	Term uint64 `json:"term"`
	// Leader is the leader the node knows, "" for none.
	Leader string `json:"leader,omitempty"`
	// Vote is the node it voted for in Term, "" for none or not exposed.
	Vote string `json:"vote,omitempty"`
	// Commit and Applied are its commit and applied indexes.
	Commit  uint64 `json:"commit"`
	Applied uint64 `json:"applied,omitempty"`
	// LastIndex is the index of the last entry of its log.
	LastIndex uint64 `json:"last_index"`
	// Abstaining: the node says it neither votes nor campaigns until a
	// leader has caught it up (chaos-node, after its storage lost records
	// it had made durable).
	Abstaining bool `json:"abstaining,omitempty"`
}

// LogEnd is how far the node's log reaches, as far as it says: its last
// index, or its commit or applied index when it reports no last index.
func (s NodeState) LogEnd() uint64 {
	if s.LastIndex > 0 {
		return s.LastIndex
	}
	return max(s.Commit, s.Applied)
}

// StateReporter is a system whose nodes say what they are.
type StateReporter interface {
	// States asks every node of nodes at once and returns the states of
	// those that answered, by node name; a node that does not answer
	// (down, paused, cut off from the controller) is left out. The error
	// is ctx's.
	States(ctx context.Context, nodes []Node) (map[string]NodeState, error)
}

// EventLogs is a system whose nodes write a protocol event log in chaos's
// format (eventlog: one JSON event a line, appended to across
// restarts).
type EventLogs interface {
	// EventLog is the path of n's event log on its host.
	EventLog(n Node) string
}

// Timing is a system's protocol timing, which the targeted faults scale
// their waits and delays to, and its recovery bound.
type Timing struct {
	// Heartbeat is the leader's heartbeat interval.
	Heartbeat time.Duration
	// ElectionTimeout is how long a follower waits without a leader before
	// it campaigns (the low end, where the system randomizes it).
	ElectionTimeout time.Duration
	// Recovery bounds how soon after the final heal clients succeed again
	// (the availability check's bound); 0 when the system states none.
	Recovery time.Duration
}

// DefaultTiming is the timing of a system that states none: Raft's
// common defaults (etcd's), and no recovery bound.
func DefaultTiming() Timing {
	return Timing{Heartbeat: 100 * time.Millisecond, ElectionTimeout: time.Second}
}

// WithDefaults is t with DefaultTiming's heartbeat and election timeout
// where t has none.
func (t Timing) WithDefaults() Timing {
	d := DefaultTiming()
	if t.Heartbeat <= 0 {
		t.Heartbeat = d.Heartbeat
	}
	if t.ElectionTimeout <= 0 {
		t.ElectionTimeout = d.ElectionTimeout
	}
	return t
}
