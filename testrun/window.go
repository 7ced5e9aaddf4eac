package testrun

import (
	"context"
	"time"

	"chaos/internal/sleep"
)

// The recovery window. The nemesis starts no fault after nemesisTime
// (time-limit - recovery) and heals everything then; the load goes on
// until loadEnd: the time limit, or Recovery after the final heal
// completed when that is later (a heal that ends late extends the load),
// but never more than maxLoadOverrun past the time limit. So the load runs
// for at least Recovery after the final heal, and the availability check
// can judge whether the healed cluster serves clients again, unless the
// heal itself took longer than maxLoadOverrun - Recovery past the time
// limit. Times are since the load began (history time).

// maxLoadOverrun bounds how far past the time limit a late heal extends
// the load.
const maxLoadOverrun = time.Minute

// loadEnd is when the load phase ends, given when the final heal completed
// (healEnd, when healed; healed is false when no schedule ran).
func loadEnd(timeLimit, recovery, healEnd time.Duration, healed bool) time.Duration {
	end := timeLimit
	if healed {
		end = max(end, healEnd+recovery)
	}
	return min(end, timeLimit+maxLoadOverrun)
}

// nemesisTime is how long the schedule runs: the load phase less the
// recovery period, when the load phase is long enough to hold both.
func (r *run) nemesisTime() time.Duration {
	if r.o.TimeLimit > 2*r.o.Recovery {
		return r.o.TimeLimit - r.o.Recovery
	}
	return r.o.TimeLimit
}

// endLoad closes stop at loadEnd, or as soon as ctx ends. healed delivers
// the history time at which the final heal completed, if a schedule ran,
// and is then closed.
func (r *run) endLoad(ctx context.Context, healed <-chan time.Duration, stop chan<- struct{}) {
	defer close(stop)
	limit := r.o.TimeLimit
	if sleep.Until(ctx, r.start.Add(limit)) != nil {
		return
	}
	last := time.NewTimer(time.Until(r.start.Add(limit + maxLoadOverrun)))
	defer last.Stop()
	var healEnd time.Duration
	var ok bool
	select {
	case healEnd, ok = <-healed:
	case <-last.C:
	case <-ctx.Done():
		return
	}
	end := loadEnd(limit, r.o.Recovery, healEnd, ok)
	if end > limit {
		r.log.Info("load extended for the recovery window", "healed_at", healEnd, "ends_at", end)
	}
	_ = sleep.Until(ctx, r.start.Add(end))
}
