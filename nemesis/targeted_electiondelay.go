package nemesis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"chaos/history/faultrec"
)

// ElectionDelay is the election-delay family: every message between the
// nodes is delayed by one and a half to two heartbeat intervals, then
// the leader is cut off, so that the others must elect under that delay.
// A vote request then reaches its peers only after those whose election
// timers fired at nearly the same moment have become candidates too: with
// election timeouts randomized over a wide range (Raft's [E, 2E)) one
// candidate still gets ahead and wins; with timers that line up (seed
// 004's narrow timers) every round splits the vote, and the terms climb
// with no leader: a livelock.
//
// The whole sequence runs inside Start: up to Rounds rounds, each cutting
// the leader off and waiting (twenty election timeouts at most) until another
// node leads, then rejoining it; the next round cuts the new leader off.
// A round without a new leader ends the sequence: it held for twenty
// election timeouts, long enough for the terms to climb. Then the cut is healed and
// the links restored: nothing stays for Stop.
//
// Op "start-election-delay": {"leader", "delay_ms", "jitter_ms", "links"
// (the packet fault's value), "rounds": [{"isolated", "term", "waited_ms",
// "next_leader", "terms"}] ("terms": how many terms the cluster climbed
// before the round ended), "cut", "outcome"}.
type ElectionDelay struct {
	// Heartbeat is the heartbeat interval (default: the system's,
	// Cluster.Timing): the delay is drawn from 1.5 to 2 of it, the jitter a fifth of it: longer
	// than the tick within which narrow timers fire, short enough that a
	// correct node's randomized timers rarely split the vote twice in a
	// row (at 3 heartbeats a correct cluster of four split five rounds
	// running, and tripped the livelock rule).
	Heartbeat time.Duration
	// Election is the election timeout (default: the system's,
	// Cluster.Timing); each round waits roundWait (20) of them at most.
	Election time.Duration
	// Rounds is how many leaders the sequence cuts off, one after the
	// other (default 3).
	Rounds int
	// Pace is the sequence's clock (default: real time).
	Pace Pace

	seq sequence
}

// ElectionDelayFamily is the election-delay family's name.
const ElectionDelayFamily = faultrec.NameElectionDelay

func (e *ElectionDelay) Name() string { return ElectionDelayFamily }

// Available needs a leader, a way to cut the network, and a way to delay
// messages on every link (tc netem, chaos-node's hooks, or the fault
// proxy).
func (e *ElectionDelay) Available(ctx context.Context, c *Cluster) error {
	if err := requireRoles(ElectionDelayFamily, c, false, false); err != nil {
		return err
	}
	if err := cutAvailable(ctx, c); err != nil {
		return fmt.Errorf("%s: %w", ElectionDelayFamily, err)
	}
	p := &Packet{Behavior: e.behavior(c, 1.5)}
	return wrapFamily(ElectionDelayFamily, p.Available(ctx, c))
}

// Start delays every link between the nodes that answer, then runs the
// rounds; see ElectionDelay.
func (e *ElectionDelay) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	s := e.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	leader, view, err := answeringLeader(ctx, c, e.Pace, e.Election)
	if err != nil {
		return Op{}, wrapFamily(ElectionDelayFamily, err)
	}
	v, err := s.begin()
	if err != nil {
		return Op{}, err
	}
	b := e.behavior(c, 1.5+0.5*rng.Float64())
	v.Leader, v.DelayMS, v.JitterMS = leader, new(b.DelayMS), new(b.JitterMS)
	if err := s.degrade(ctx, view, b, amongLinks(partitionNames(view.Nodes))); err != nil {
		return s.op(err)
	}
	return s.finish(ctx, c, e.rounds(ctx, view, v, leader))
}

// rounds cuts the leader off, waits for the next and rejoins it, Rounds
// times at most, and records each round under "rounds".
func (e *ElectionDelay) rounds(ctx context.Context, view *Cluster, v *faultrec.Targeted, leader string) error {
	s, up := &e.seq, partitionNames(view.Nodes)
	n := e.Rounds
	if n <= 0 {
		n = 3
	}
	for range n {
		term := topTerm(ctx, view)
		v.Rounds = append(v.Rounds, faultrec.Round{Isolated: leader, Term: term})
		round := &v.Rounds[len(v.Rounds)-1]
		if err := s.cut.set(ctx, view, grudgeIsolate(up, leader)); err != nil {
			return err
		}
		began := e.Pace.now()
		next, top, err := e.awaitNext(ctx, view, leader, term)
		round.WaitedMS, round.Terms = new(e.Pace.now().Sub(began).Milliseconds()), new(top-term)
		if err != nil {
			return err
		}
		if next == "" {
			v.Outcome = "no new leader within twenty election timeouts"
			return nil
		}
		round.NextLeader = next
		if err := s.cut.stop(ctx, view); err != nil {
			return err
		}
		leader = next
	}
	return nil
}

// awaitNext waits, roundWait election timeouts at most, until Cluster.Leader
// names a node other than old, and returns it ("" when none did in time)
// and the highest term the nodes reported meanwhile (term for a system
// that cannot report its nodes' states).
func (e *ElectionDelay) awaitNext(ctx context.Context, view *Cluster, old string, term uint64) (string, uint64, error) {
	next, top := "", term
	_, err := e.Pace.until(ctx, roundWait*electionOf(view, e.Election), leaderPoll, func() (bool, error) {
		top = max(top, topTerm(ctx, view))
		if name, err := view.Leader(ctx); err == nil && name != old {
			next = name
		}
		return next != "", nil
	})
	return next, top, err
}

// roundWait is how many election timeouts a round waits for a new leader:
// a correct node elects one within a few, and a livelock climbs one term
// in about two (a pre-vote and a vote round, each as long as the delay
// lets it be), so that a round without a leader shows the availability
// check's five leaderless terms and more.
const roundWait = 20

// topTerm is the highest term the nodes of c report, 0 when they cannot
// say.
func topTerm(ctx context.Context, c *Cluster) uint64 {
	var top uint64
	if c.States == nil {
		return 0
	}
	st, err := c.States(ctx)
	if err != nil {
		return 0
	}
	for _, n := range st {
		top = max(top, n.Term)
	}
	return top
}

// behavior is a delay of k heartbeats (whole milliseconds) with a fifth of
// a heartbeat of jitter.
func (e *ElectionDelay) behavior(c *Cluster, k float64) PacketBehavior {
	hb := heartbeatOf(c, e.Heartbeat)
	ms := float64(hb.Milliseconds())
	return PacketBehavior{DelayMS: math.Round(k * ms), JitterMS: math.Round(ms / 5)}
}

// Stop undoes what a sequence cut short left: the cut and the links.
func (e *ElectionDelay) Stop(ctx context.Context, c *Cluster) (Op, error) {
	return e.state().stop(ctx, c)
}

// Heal removes every cut and every link fault of the targeted faults.
func (e *ElectionDelay) Heal(ctx context.Context, c *Cluster) error { return e.state().heal(ctx, c) }

func (e *ElectionDelay) state() *sequence { return e.seq.setup(ElectionDelayFamily, 0) }

// OneShot: a sequence that succeeded leaves nothing for Stop.
func (e *ElectionDelay) OneShot() {}
