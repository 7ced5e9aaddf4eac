package nemesis

import (
	"context"
	"time"

	"chaos/db"
	"chaos/internal/sleep"
)

// Probe is the check kill and pause run around a fault, as etcd's
// robustness tests do: a fault that did not take effect is reported, not
// assumed. A node answers when db.Up succeeds within Timeout: its process
// answers on its client port, whatever the state of the cluster.
type Probe struct {
	// Timeout bounds one check (default 500ms).
	Timeout time.Duration
	// Tries is how many checks after the fault may see the node still
	// answering before the fault counts as not observed (default 3): a
	// process takes a moment to die.
	Tries int
	// Gap is the pause between two checks (default 100ms).
	Gap time.Duration
}

// Effects recorded in the "effect" field of kill and pause ops.
const (
	EffectObserved    = "observed"
	EffectNotObserved = "not observed"
)

func (p Probe) withDefaults() Probe {
	if p.Timeout <= 0 {
		p.Timeout = 500 * time.Millisecond
	}
	if p.Tries <= 0 {
		p.Tries = 3
	}
	if p.Gap <= 0 {
		p.Gap = 100 * time.Millisecond
	}
	return p
}

// answers reports whether n answers one check.
func (p Probe) answers(ctx context.Context, d db.DB, n db.Node) bool {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	return d.Up(ctx, n) == nil
}

// stopsAnswering reports whether some check of n, of Tries spaced by Gap,
// fails.
func (p Probe) stopsAnswering(ctx context.Context, d db.DB, n db.Node) bool {
	for i := range p.Tries {
		if i > 0 && sleep.For(ctx, p.Gap) != nil {
			return false
		}
		if !p.answers(ctx, d, n) {
			return true
		}
	}
	return false
}

// DefaultUpTimeout bounds the wait for a restarted or resumed node's
// process to answer, when the fault sets no bound of its own.
const DefaultUpTimeout = 10 * time.Second

// upPoll is the pause between two checks while waiting for a node to come
// up.
const upPoll = 100 * time.Millisecond

// waitUp checks db.Up every upPoll until n answers, ctx ends, or timeout
// (default DefaultUpTimeout) passes; then it returns Up's last error. It
// never waits on the cluster (db.Ready): a restarted node is up when its
// process answers, even while a majority of its peers is paused or cut off.
func waitUp(ctx context.Context, d db.DB, n db.Node, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultUpTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := d.Up(ctx, n)
		if err == nil {
			return nil
		}
		if sleep.For(ctx, upPoll) != nil {
			return err
		}
	}
}
