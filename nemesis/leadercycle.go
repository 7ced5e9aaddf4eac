package nemesis

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// LeaderCycle is the leader-cycle family, the leaders crashing in cycles
// of seed 000: the leader is cut off, the others elect a new leader, the
// cut is healed (the old leader rejoins, a step behind), and the newest
// leader is killed at once, while it is the one node that has everything
// its term acknowledged. Stop restarts it.
//
// Op "start-leader-cycle": {"isolated", "new_leader", "waited_ms",
// "killed", "outcome"}; "outcome" says why the cycle stopped short, when
// it did (no new leader within the wait: the cut is healed and nothing is
// killed).
type LeaderCycle struct {
	// Election is the cluster's election timeout (default 500ms): the
	// wait for a new leader lasts 10 of them.
	Election time.Duration
	// UpTimeout bounds the wait for the restarted node (default
	// DefaultUpTimeout).
	UpTimeout time.Duration
	// Pace is the sequence's clock (default: real time).
	Pace Pace
	// HTTP sends the fault hook requests; nil means a client with a 5 s
	// timeout.
	HTTP *http.Client

	seq sequence
}

// LeaderCycleFamily is the leader-cycle family's name.
const LeaderCycleFamily = "leader-cycle"

func (l *LeaderCycle) Name() string { return LeaderCycleFamily }

// Available needs a leader, a way to cut the network, and Remotes to kill
// with.
func (l *LeaderCycle) Available(ctx context.Context, c *Cluster) error {
	if err := requireRoles(LeaderCycleFamily, c, false, false); err != nil {
		return err
	}
	if err := requireRemotes(LeaderCycleFamily, c); err != nil {
		return err
	}
	return wrapFamily(LeaderCycleFamily, cutAvailable(ctx, c))
}

// Start runs the cycle: cut the leader off, wait for the next, heal,
// kill the next.
func (l *LeaderCycle) Start(ctx context.Context, c *Cluster, _ *rand.Rand) (Op, error) {
	s := l.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := leaderName(ctx, c)
	if err != nil {
		return Op{}, wrapFamily(LeaderCycleFamily, err)
	}
	v, err := s.begin()
	if err != nil {
		return Op{}, err
	}
	v["isolated"] = old
	if err := s.cut.set(ctx, c, grudgeIsolate(partitionNames(c.Nodes), old)); err != nil {
		return s.op(err)
	}
	began := l.Pace.now()
	next := ""
	found, err := l.Pace.until(ctx, 10*electionOf(l.Election), pollEvery, func() (bool, error) {
		name, lerr := c.Leader(ctx)
		if lerr == nil && name != old {
			next = name
		}
		return next != "", nil
	})
	v["waited_ms"] = l.Pace.now().Sub(began).Milliseconds()
	if err != nil {
		return s.op(err)
	}
	if err := s.cut.stop(ctx, c); err != nil {
		return s.op(err)
	}
	if !found {
		v["outcome"] = "no new leader"
		return s.op(nil)
	}
	v["new_leader"], v["killed"] = next, next
	return s.op(s.kill(ctx, c, next))
}

// Stop restarts the killed leader (and heals whatever a cycle cut short
// left).
func (l *LeaderCycle) Stop(ctx context.Context, c *Cluster) (Op, error) {
	return l.state().stop(ctx, c)
}

// Heal restarts the node this value killed and removes every cut of the
// targeted faults' mechanisms.
func (l *LeaderCycle) Heal(ctx context.Context, c *Cluster) error { return l.state().heal(ctx, c) }

func (l *LeaderCycle) state() *sequence {
	return l.seq.setup(LeaderCycleFamily, l.HTTP, l.UpTimeout)
}

// pollEvery is how often a sequence looks at the cluster while it waits
// for a role or an event.
const pollEvery = 10 * time.Millisecond

// electionOf is the election timeout d, or chaos-node's default 500ms.
func electionOf(d time.Duration) time.Duration {
	if d <= 0 {
		return 500 * time.Millisecond
	}
	return d
}
