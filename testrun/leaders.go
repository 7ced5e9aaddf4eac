package testrun

import (
	"context"
	"sync"
	"time"

	"chaos/db"
	"chaos/testrun/runrecord"
)

// noLeader is how the progress line and results.json say that no node
// reported a leader.
const noLeader = "none"

// leaderLog records who leads, as the progress poller samples it once a
// second during the load phase, keeping only the changes: one entry per
// change, so at most one per sample. It is safe for concurrent use.
type leaderLog struct {
	mu      sync.Mutex
	changes []runrecord.LeaderChange
}

// observe records that leader led at elapsed, when it differs from the
// last leader recorded.
func (l *leaderLog) observe(elapsed time.Duration, leader string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.changes); n > 0 && l.changes[n-1].Leader == leader {
		return
	}
	l.changes = append(l.changes, runrecord.LeaderChange{TimeS: elapsed.Seconds(), Leader: leader})
}

// list returns the changes recorded, oldest first; [] when none were
// (a system that cannot say who leads), never nil.
func (l *leaderLog) list() []runrecord.LeaderChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]runrecord.LeaderChange{}, l.changes...)
}

// observeLeader asks the system who leads now, records it in r.leaders
// when the system can say, and returns it for the progress line ("none"
// when no node reports a leader, or the system cannot say).
func (r *run) observeLeader(ctx context.Context) string {
	if db.CapabilitiesOf(r.cl.DB).Leader == nil {
		return noLeader
	}
	at := time.Since(r.start)
	leader, err := r.cl.Leader(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return noLeader // the load ended: not an observation
		}
		leader = noLeader
	}
	r.leaders.observe(at, leader)
	return leader
}
