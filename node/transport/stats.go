package transport

import "sync/atomic"

// PeerStats are one peer's counters since New.
type PeerStats struct {
	// Sent counts messages written to the peer's connection.
	Sent uint64
	// Received counts messages from the peer passed to the Handler.
	Received uint64
	// Dropped counts outbound messages discarded: queue or fault pipeline
	// full, Drop, Loss, a failed dial or write, or too large for a frame.
	Dropped uint64
	// DroppedInbound counts messages from the peer discarded by Drop.
	DroppedInbound uint64
	// Connects counts successful dials to the peer.
	Connects uint64
	// Connected reports whether an outbound connection is open now.
	Connected bool
}

// Stats are the transport's counters, for metrics.
type Stats struct {
	Peers map[uint64]PeerStats
	// Unroutable counts messages passed to Send whose To is not a peer.
	Unroutable uint64
	// RejectedConns counts inbound connections closed for bad input or
	// refused for exceeding MaxInbound.
	RejectedConns uint64
}

// counters are a peer's PeerStats, updated concurrently.
type counters struct {
	sent, received, dropped, droppedIn, connects atomic.Uint64
	connected                                    atomic.Bool
}

func (c *counters) snapshot() PeerStats {
	return PeerStats{
		Sent:           c.sent.Load(),
		Received:       c.received.Load(),
		Dropped:        c.dropped.Load(),
		DroppedInbound: c.droppedIn.Load(),
		Connects:       c.connects.Load(),
		Connected:      c.connected.Load(),
	}
}

// Stats returns a snapshot of the counters.
func (t *Transport) Stats() Stats {
	peers := t.peerTable()
	s := Stats{
		Peers:         make(map[uint64]PeerStats, len(peers)),
		Unroutable:    t.unroutable.Load(),
		RejectedConns: t.rejected.Load(),
	}
	for id, p := range peers {
		s.Peers[id] = p.snapshot()
	}
	return s
}
