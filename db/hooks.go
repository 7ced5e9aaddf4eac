package db

import (
	"context"
	"errors"
)

// Hooks are fault hooks inside the node processes (chaos-node's
// --enable-fault-hooks): faults a node's own transport and clock perform
// on request, affecting that process only. Nodes are named by their node
// names. Every method but Hooked sends one request to one node; any
// answer but success is an error naming the node and the request.
//
// The methods that remove a fault (Clear..., Reset...) succeed on a node
// that holds none: one that does not run (the fault died with its
// process) or runs without hooks. The errors of the others wrap
// ErrNoHookState in those cases. Implementations are safe for concurrent
// use.
type Hooks interface {
	// Hooked reports whether node answers the hooks.
	Hooked(node string) bool
	// SetDropList makes node's transport discard every message to and
	// from the peers named, replacing the list set before; an empty list
	// drops nothing.
	SetDropList(ctx context.Context, node string, peers []string) error
	// ClearDropList empties node's drop list.
	ClearDropList(ctx context.Context, node string) error
	// SetNetFaults sets message faults on node's messages toward f.Peers,
	// replacing those set before for the same peers.
	SetNetFaults(ctx context.Context, node string, f NetFaults) error
	// ClearNetFaults removes every message fault of node.
	ClearNetFaults(ctx context.Context, node string) error
	// SetClock jumps node's clock by s.OffsetMS (offsets add up) and, when
	// s.Rate > 0, makes its raft ticker run at Rate times true time; it
	// returns the clock the node answers with: the total offset and the
	// rate.
	SetClock(ctx context.Context, node string, s ClockSkew) (ClockSkew, error)
	// ResetClock puts node's clock back on true time at rate 1.
	ResetClock(ctx context.Context, node string) error
	// SetAppendLimit bounds the append messages node sends as leader.
	SetAppendLimit(ctx context.Context, node string, l AppendLimit) error
	// ResetAppendLimit puts node's own append limits back.
	ResetAppendLimit(ctx context.Context, node string) error
}

// ErrNoHookState is wrapped by a hook request's error when the node holds
// no fault of the hooks: it does not run (the connection was refused) or
// runs without hooks.
var ErrNoHookState = errors.New("the node holds no hook faults (it does not run, or runs without fault hooks)")

// NetFaults are message faults toward Peers (empty: every peer).
// Probabilities are per message, in [0, 1]; DelayMS plus JitterMS is at
// most a minute, and Reorder needs a delay.
type NetFaults struct {
	Peers     []string
	Loss      float64
	Duplicate float64
	Reorder   float64
	DelayMS   float64
	JitterMS  float64
}

// ClockSkew is a node's clock fault: an offset from true time, in
// milliseconds, and the rate of its raft ticker (1 is true time).
type ClockSkew struct {
	OffsetMS int64
	Rate     float64
}

// AppendLimit bounds the append messages a leader sends: MaxBytes > 0 the
// entry bytes of one message (1: one entry per message), MaxInflight > 0
// the messages in flight to one follower (1: the next once the one before
// is acknowledged).
type AppendLimit struct {
	MaxBytes    uint64
	MaxInflight uint64
}
