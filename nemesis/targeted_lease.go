package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"chaos/history/faultrec"
)

// Lease is the lease family: the leader's clock is slowed (its raft ticker
// runs at a fraction of true time, through chaos-node's clock hook), then
// the leader is cut off from every other node. The others elect a new
// leader and go on writing; a leader that trusts a lease measured on its
// own clock (raft.ReadLeaseBased) keeps believing in it for an election
// timeout of its slow clock, many of true time, and serves reads the new
// leader's writes made stale. That is the clock assumption of lease-based
// reads, broken as a slow VM, a paused process or a drifting clock breaks
// it. A correct ReadIndex read needs a quorum's answer, which the cut-off
// leader cannot get.
//
// The whole sequence runs inside Start: once another node leads, the cut
// stays for as long as the old leader's lease can last on its slow clock,
// then the cut is healed and the clock reset; Stop undoes only what a
// sequence cut short left.
//
// Op "start-lease": {"leader", "rate", "effect", "new_leader", "held_ms",
// "cut": the grudge and its mechanism, "outcome"}.
type Lease struct {
	// Rates are the clock rates Start picks among (default 0.05 and 0.1):
	// at 0.1 a lease of an election timeout lasts ten of true time, so the
	// cut holds for leaseHold. (At 0.2 it held 2.5 s from the cut, about
	// 1.5 s past the next election: too short a window for the clients'
	// reads to find the stale ones in a default run, which found
	// lease-read 2 times in 4.)
	Rates []float64
	// Election is the election timeout (default: the system's,
	// Cluster.Timing).
	Election time.Duration
	// Pace is the sequence's clock (default: real time).
	Pace Pace
	// Clock is how the leader's clock is slowed: ClockHook (the default),
	// ClockVDSO or ClockFaketime.
	Clock ClockStrategy

	seq sequence
}

// LeaseFamily is the lease family's name.
const LeaseFamily = faultrec.NameLease

func (l *Lease) Name() string { return LeaseFamily }

// Available needs a leader, a clock its strategy can slow on every node
// (the clock hook, or a fake clock), and a way to cut the network.
func (l *Lease) Available(ctx context.Context, c *Cluster) error {
	if err := requireRoles(LeaseFamily, c, false, false); err != nil {
		return err
	}
	if l.clock() == ClockSystem {
		return fmt.Errorf("%s: the system clock strategy cannot slow a clock; use hook or faketime", LeaseFamily)
	}
	if err := (&Clock{Strategy: l.clock()}).Available(ctx, c); err != nil {
		return fmt.Errorf("%s: %w", LeaseFamily, err)
	}
	return wrapFamily(LeaseFamily, cutAvailable(ctx, c))
}

// Start slows the leader's clock, then cuts the leader off from the other
// nodes that answer (one killed or paused by another fault is left
// alone). When a step
// fails, what the earlier ones did stays recorded, for Stop to undo.
func (l *Lease) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	s := l.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	leader, view, err := answeringLeader(ctx, c, l.Pace, l.Election)
	if err != nil {
		return Op{}, wrapFamily(LeaseFamily, err)
	}
	v, err := s.begin()
	if err != nil {
		return Op{}, err
	}
	rates := l.Rates
	if len(rates) == 0 {
		rates = []float64{0.05, 0.1}
	}
	rate := rates[rng.IntN(len(rates))]
	v.Leader, v.Rate, v.Clock = leader, new(rate), string(l.clock())
	var got float64
	if l.clock() == ClockFaketime {
		got, err = s.setFakeRate(ctx, c, leader, rate)
	} else {
		set := s.setRate
		if l.clock() == ClockVDSO {
			set = s.setVDSORate
		}
		got, err = set(ctx, c, leader, rate)
		v.Effect = EffectObserved
		if got != rate {
			v.Effect = EffectNotObserved
		}
	}
	if err != nil {
		return s.op(err)
	}
	if err := s.cut.set(ctx, view, grudgeIsolate(partitionNames(view.Nodes), leader)); err != nil {
		return s.op(err)
	}
	return s.finish(ctx, c, l.hold(ctx, c, v, leader, rate))
}

// hold waits until another node leads, then for as long as the cut-off
// leader's lease lasts on its slow clock (an election timeout of it, at
// most leaseHold of them in true time): the window of its stale reads.
func (l *Lease) hold(ctx context.Context, c *Cluster, v *faultrec.Targeted, leader string, rate float64) error {
	election := electionOf(c, l.Election)
	began := l.Pace.now()
	next := ""
	_, err := l.Pace.until(ctx, 10*election, pollEvery, func() (bool, error) {
		if name, lerr := c.Leader(ctx); lerr == nil && name != leader {
			next = name
		}
		return next != "", nil
	})
	if err != nil {
		return err
	}
	if next == "" {
		v.Outcome = "no new leader"
		return nil
	}
	v.NewLeader = next
	err = l.Pace.wait(ctx, min(time.Duration(float64(election)/rate), leaseHold*election))
	v.HeldMS = new(l.Pace.now().Sub(began).Milliseconds())
	return err
}

// leaseHold bounds how long the cut stays once another node leads, in
// election timeouts (4 s for chaos-node): the clients read from the old
// leader hundreds of times a second, so a stale read shows within it, and
// a shorter sequence leaves the schedule time for the others.
const leaseHold = 8

// Stop heals the cut and resets the leader's clock.
func (l *Lease) Stop(ctx context.Context, c *Cluster) (Op, error) { return l.state().stop(ctx, c) }

// Heal removes every cut of the targeted faults' mechanisms and resets
// every node's clock hook.
func (l *Lease) Heal(ctx context.Context, c *Cluster) error { return l.state().heal(ctx, c) }

func (l *Lease) state() *sequence { return l.seq.setup(LeaseFamily, 0) }

func (l *Lease) clock() ClockStrategy {
	if l.Clock == "" {
		return ClockHook
	}
	return l.Clock
}

// OneShot: a sequence that succeeded leaves nothing for Stop.
func (l *Lease) OneShot() {}
