package transport

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"time"
)

// MaxFaultDelay bounds Delay+Jitter, and so how long a message can be held.
const MaxFaultDelay = time.Minute

// ErrNoRand means a fault needs random decisions but Config.Rand was nil.
var ErrNoRand = errors.New("fault needs Config.Rand")

// Faults are the network faults the transport injects on one peer's link.
// The zero value injects nothing. Loss, duplication, delay and reordering
// apply to outbound messages, in that order; Drop applies both ways.
type Faults struct {
	// Drop partitions the link: outbound messages to the peer are discarded,
	// and inbound messages whose From is the peer are discarded on receipt.
	Drop bool
	// Loss is the probability that an outbound message is discarded.
	Loss float64
	// Duplicate is the probability that an outbound message is sent twice.
	Duplicate float64
	// Delay is added to every outbound message's departure.
	Delay time.Duration
	// Jitter adds a uniform random duration in [0, Jitter) to each message's
	// delay, drawn per copy; messages can overtake each other by up to Jitter.
	Jitter time.Duration
	// Reorder is the probability that a message is held back and sent after
	// the next batch (or with the next keepalive tick, if no batch follows).
	Reorder float64
}

// Validate reports whether the probabilities lie in [0, 1] and the delays
// are non-negative with Delay+Jitter at most MaxFaultDelay.
func (f Faults) Validate() error {
	for _, p := range [...]struct {
		name string
		v    float64
	}{{"loss", f.Loss}, {"duplicate", f.Duplicate}, {"reorder", f.Reorder}} {
		if math.IsNaN(p.v) || p.v < 0 || p.v > 1 {
			return fmt.Errorf("faults: %s probability %v outside [0, 1]", p.name, p.v)
		}
	}
	if f.Delay < 0 || f.Jitter < 0 {
		return fmt.Errorf("faults: negative delay %v or jitter %v", f.Delay, f.Jitter)
	}
	if f.Delay > MaxFaultDelay || f.Jitter > MaxFaultDelay-f.Delay {
		return fmt.Errorf("faults: delay %v plus jitter %v exceeds %v", f.Delay, f.Jitter, MaxFaultDelay)
	}
	return nil
}

// random reports whether applying f draws random numbers.
func (f Faults) random() bool {
	return f.Loss > 0 || f.Duplicate > 0 || f.Reorder > 0 || f.Jitter > 0
}

// faultTable maps a peer id to its faults, with key 0 for all peers. A table
// is never modified once published; updates publish a new table.
type faultTable map[uint64]Faults

// forPeer returns the faults for peer id: its own entry if it has one (which
// wins entirely over the all-peers entry), else the all-peers entry.
func (ft faultTable) forPeer(id uint64) Faults {
	if f, ok := ft[id]; ok {
		return f
	}
	return ft[0]
}

// SetFaults sets the faults on the link to peer (0: every peer, used where a
// peer has no entry of its own). Setting the zero Faults removes the entry.
// It takes effect for messages not yet written, including queued and
// delayed ones. It fails for an unknown peer, invalid faults, or random
// faults when Config.Rand was nil.
func (t *Transport) SetFaults(peer uint64, f Faults) error {
	if _, ok := t.peerTable()[peer]; !ok && peer != 0 {
		return fmt.Errorf("set faults: unknown peer %d", peer)
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("set faults for peer %d: %w", peer, err)
	}
	if f.random() && !t.seeded {
		return fmt.Errorf("set faults for peer %d: %w", peer, ErrNoRand)
	}
	t.faultsMu.Lock()
	defer t.faultsMu.Unlock()
	next := maps.Clone(*t.faults.Load())
	if f == (Faults{}) {
		delete(next, peer)
	} else {
		next[peer] = f
	}
	t.faults.Store(&next)
	t.log.Info("faults set", "peer", peer, "faults", fmt.Sprintf("%+v", f))
	return nil
}

// ClearFaults removes every fault.
func (t *Transport) ClearFaults() {
	t.faultsMu.Lock()
	defer t.faultsMu.Unlock()
	t.faults.Store(&faultTable{})
	t.log.Info("faults cleared")
}

// Faults returns a copy of the fault settings, keyed by peer (0: all peers).
func (t *Transport) Faults() map[uint64]Faults {
	return maps.Clone(map[uint64]Faults(*t.faults.Load()))
}
