package faultproxy

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"time"
)

// MaxDelayMS bounds a Behavior's delay plus jitter, in milliseconds: the
// nemesis refuses more, and longer delays only stall TCP.
const MaxDelayMS = 60_000

// Behavior is what happens to the bytes of one direction of a link. The
// zero Behavior forwards them as they come.
type Behavior struct {
	// DelayMS is added to every chunk; JitterMS adds a further uniform
	// random delay in [0, JitterMS). Their sum is at most MaxDelayMS.
	DelayMS  float64 `json:"delay_ms,omitempty"`
	JitterMS float64 `json:"jitter_ms,omitempty"`
	// RateKbit caps the bandwidth, in kbit/s (1000 bit/s); 0 is no cap.
	RateKbit int `json:"rate_kbit,omitempty"`
}

// Validate reports whether b is within bounds.
func (b Behavior) Validate() error {
	switch {
	case math.IsNaN(b.DelayMS) || math.IsNaN(b.JitterMS) || b.DelayMS < 0 || b.JitterMS < 0 || b.DelayMS+b.JitterMS > MaxDelayMS:
		return fmt.Errorf("delay %v ms plus jitter %v ms outside [0, %d] ms", b.DelayMS, b.JitterMS, MaxDelayMS)
	case b.RateKbit < 0:
		return fmt.Errorf("negative rate %d kbit/s", b.RateKbit)
	}
	return nil
}

// delay is DelayMS as a duration.
func (b Behavior) delay() time.Duration { return msDuration(b.DelayMS) }

// jitter is JitterMS as a duration.
func (b Behavior) jitter() time.Duration { return msDuration(b.JitterMS) }

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// Link is one degraded direction between two addresses: the bytes a
// connection carries from From toward To.
type Link struct {
	From netip.Addr `json:"from"`
	To   netip.Addr `json:"to"`
	Behavior
}

// Validate reports whether l names two IPv4 addresses, distinct, and a
// Behavior within bounds.
func (l Link) Validate() error {
	switch {
	case !l.From.Is4() || !l.To.Is4():
		return fmt.Errorf("link %v -> %v: want two IPv4 addresses", l.From, l.To)
	case l.From == l.To:
		return fmt.Errorf("link %v -> %v: a link joins two addresses", l.From, l.To)
	}
	if err := l.Behavior.Validate(); err != nil {
		return fmt.Errorf("link %v -> %v: %w", l.From, l.To, err)
	}
	return nil
}

// Table holds the links of every owner. An owner is whoever set them,
// a node in practice: nodes that share a host (local mode) share its
// proxy, and each replaces its own links without touching the others'.
// Safe for concurrent use; the zero value is an empty table.
type Table struct {
	mu     sync.RWMutex
	owners map[string][]Link
}

// Set replaces owner's links with links, after checking every one; none
// removes owner. The table is unchanged when a link is refused.
func (t *Table) Set(owner string, links []Link) error {
	if owner == "" {
		return errors.New("set links: no owner named")
	}
	for _, l := range links {
		if err := l.Validate(); err != nil {
			return fmt.Errorf("set links of %s: %w", owner, err)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owners == nil {
		t.owners = map[string][]Link{}
	}
	if len(links) == 0 {
		delete(t.owners, owner)
		return nil
	}
	t.owners[owner] = slices.Clone(links)
	return nil
}

// Lookup returns the behavior of the link from -> to: that of the first
// owner, by name, that has the link; the zero Behavior when none does.
func (t *Table) Lookup(from, to netip.Addr) Behavior {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, owner := range t.names() {
		for _, l := range t.owners[owner] {
			if l.From == from && l.To == to {
				return l.Behavior
			}
		}
	}
	return Behavior{}
}

// Owners returns a copy of the table: each owner's links.
func (t *Table) Owners() map[string][]Link {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make(map[string][]Link, len(t.owners))
	for o, l := range t.owners {
		out[o] = slices.Clone(l)
	}
	return out
}

// names are the owners in name order. The caller holds mu.
func (t *Table) names() []string {
	names := make([]string, 0, len(t.owners))
	for o := range t.owners {
		names = append(names, o)
	}
	sort.Strings(names)
	return names
}
