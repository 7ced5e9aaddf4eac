package db

import (
	"context"
	"time"
)

// ClockReader is a system that shows its nodes' clocks: what a node
// answers as its time now, read through the system itself (an HTTP
// answer, say), not through chaos's own agents. A clock fault reads it
// after bending a node's clock, to record what the system showed.
type ClockReader interface {
	// NodeClock is the time n's system shows now. It changes nothing.
	NodeClock(ctx context.Context, n Node) (time.Time, error)
}
