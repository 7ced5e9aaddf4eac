package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"chaos/history/faultrec"
)

// LeaderCycle is the leader-cycle family, the leaders crashing in cycles
// of seed 000: the leader is cut off, the others elect a new leader, the
// cut is healed (the old leader rejoins, a step behind), and the newest
// leader is killed at once, while it may be the one node that has
// everything its term acknowledged; once the others elected the next
// leader it is restarted. The whole cycle runs inside Start, so that no
// node stays down while other faults run; Stop only undoes what a cycle
// cut short left (a cut, a node down).
//
// Op "start-leader-cycle": {"isolated", "waited_ms", "new_leader",
// "killed", "next_leader", "outcome"}; "outcome" says why the cycle
// stopped short, when it did (no new leader within the wait: the cut is
// healed and nothing is killed).
type LeaderCycle struct {
	// Election is the election timeout (default: the system's,
	// Cluster.Timing): the wait for a new leader lasts 10 of them.
	Election time.Duration
	// UpTimeout bounds the wait for the restarted node (default
	// DefaultUpTimeout).
	UpTimeout time.Duration
	// Pace is the sequence's clock (default: real time).
	Pace Pace

	seq sequence
}

// LeaderCycleFamily is the leader-cycle family's name.
const LeaderCycleFamily = faultrec.NameLeaderCycle

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

// Start runs the cycle: cut the leader off, wait for the next, heal, kill
// the next, wait for the one after it, restart the killed one. A node that
// does not answer (killed or paused by another fault) is left alone.
func (l *LeaderCycle) Start(ctx context.Context, c *Cluster, _ *rand.Rand) (Op, error) {
	s := l.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	old, view, err := answeringLeader(ctx, c, l.Pace, l.Election)
	if err != nil {
		return Op{}, wrapFamily(LeaderCycleFamily, err)
	}
	v, err := s.begin()
	if err != nil {
		return Op{}, err
	}
	v.Isolated = old
	if err := s.cut.set(ctx, view, grudgeIsolate(partitionNames(view.Nodes), old)); err != nil {
		return s.op(err)
	}
	began := l.Pace.now()
	next, err := l.awaitLeaderOtherThan(ctx, c, old)
	v.WaitedMS = new(l.Pace.now().Sub(began).Milliseconds())
	if err != nil {
		return s.op(err)
	}
	if err := s.cut.stop(ctx, c); err != nil {
		return s.op(err)
	}
	if next == "" {
		v.Outcome = "no new leader"
		return s.op(nil)
	}
	v.NewLeader, v.Killed = next, next
	if err := s.kill(ctx, c, next); err != nil {
		return s.op(err)
	}
	after, err := l.awaitLeaderOtherThan(ctx, c, next)
	if after != "" {
		v.NextLeader = after
	}
	return s.op(errors.Join(err, s.restartNode(ctx, c, next)))
}

// awaitLeaderOtherThan waits, ten election timeouts at most, until
// Cluster.Leader names a node other than not, and returns it ("" when
// none did in time).
func (l *LeaderCycle) awaitLeaderOtherThan(ctx context.Context, c *Cluster, not string) (string, error) {
	next := ""
	_, err := l.Pace.until(ctx, 10*electionOf(c, l.Election), pollEvery, func() (bool, error) {
		name, lerr := c.Leader(ctx)
		if lerr == nil && name != not {
			next = name
		}
		return next != "", nil
	})
	return next, err
}

// Stop undoes what a cycle cut short left: it restarts a node still down
// and heals the cut.
func (l *LeaderCycle) Stop(ctx context.Context, c *Cluster) (Op, error) {
	return l.state().stop(ctx, c)
}

// Heal restarts the node this value killed and removes every cut of the
// targeted faults' mechanisms.
func (l *LeaderCycle) Heal(ctx context.Context, c *Cluster) error { return l.state().heal(ctx, c) }

func (l *LeaderCycle) state() *sequence {
	return l.seq.setup(LeaderCycleFamily, l.UpTimeout)
}

// pollEvery is how often a sequence looks at the cluster while it waits
// for a role or an event.
const pollEvery = 10 * time.Millisecond

// OneShot: a sequence that succeeded leaves nothing for Stop.
func (l *LeaderCycle) OneShot() {}
