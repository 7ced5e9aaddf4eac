package nodeapi

import "chaos/node/transport"

// ClockFault is the body of RouteSetClock and the clock of Faults. As a
// request, OffsetMS jumps the node's clock by that much (offsets add up)
// and a Rate > 0 sets how fast its raft ticker runs (1 is true time; at
// most 100). As an answer, OffsetMS is the total offset and Rate the rate.
type ClockFault struct {
	OffsetMS int64   `json:"offset_ms"`
	Rate     float64 `json:"rate"`
}

// PartitionRequest is the body of RouteSetPartition: the peers whose
// messages, both ways, the node's transport discards from now on. It
// replaces the previous drop list; empty heals it. The node itself and
// unknown names are refused (400).
type PartitionRequest struct {
	Drop []string `json:"drop"`
}

// NetFaults is the body of RouteSetNet: message faults toward Peers (empty:
// every peer), replacing those set before for the same peers.
// Probabilities are per message, in [0, 1]; DelayMS plus JitterMS is at
// most transport.MaxFaultDelay, and Reorder needs a delay.
type NetFaults struct {
	Peers     []string `json:"peers"`
	Loss      float64  `json:"loss"`
	Duplicate float64  `json:"duplicate"`
	Reorder   float64  `json:"reorder"`
	DelayMS   float64  `json:"delay_ms"`
	JitterMS  float64  `json:"jitter_ms"`
}

// AppendLimit is the body of RouteSetAppend and the append limit of
// Faults. As a request, MaxBytes > 0 bounds the entry bytes of one append
// message the node sends as leader (1: one entry per message, as
// --max-append-bytes 1), in place of the limit it was started with, and
// MaxInflight > 0 the append messages in flight to one follower (1: the
// next is sent once the one before is acknowledged); 0 puts the node's
// own back. As an answer, each is the limit set by the hook, 0 when none.
// No limit breaks Raft's safety; small ones expose, and slow down, the
// order in which a new leader's old entries reach its followers.
type AppendLimit struct {
	MaxBytes    uint64 `json:"max_bytes"`
	MaxInflight uint64 `json:"max_inflight,omitempty"`
}

// Faults is the body of a 200 to every fault hook: the node's faults after
// the request. Drop is the sorted drop list, never null; Net holds the net
// faults by peer name ("" for every peer) as the transport keeps them.
type Faults struct {
	Clock  ClockFault                  `json:"clock"`
	Drop   []string                    `json:"drop"`
	Net    map[string]transport.Faults `json:"net"`
	Append AppendLimit                 `json:"append"`
}
