package nemesis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"
)

// ElectionDelay is the election-delay family: every message between the
// nodes is delayed by one to three heartbeat intervals, then the leader is
// cut off, so that the others must elect under that delay, for as long as
// the fault lasts. A vote request then reaches its peers only after those
// whose election timers fired at nearly the same moment have become
// candidates too: with election timeouts randomized over a wide range
// (Raft's [E, 2E)) one candidate still gets ahead and wins; with timers
// that line up (seed 004's narrow timers) every round splits the vote,
// and the terms climb with no leader: a livelock.
//
// Op "start-election-delay": {"leader", "delay_ms", "jitter_ms", "links"
// (the packet fault's value), "cut"}; Stop heals the cut and the links.
type ElectionDelay struct {
	// Heartbeat is the cluster's heartbeat interval (default 50ms): the
	// delay is drawn from 1.5 to 3 of it, the jitter a fifth of it.
	Heartbeat time.Duration
	// HTTP sends the fault hook requests; nil means a client with a 5 s
	// timeout.
	HTTP *http.Client

	seq sequence
}

// ElectionDelayFamily is the election-delay family's name.
const ElectionDelayFamily = "election-delay"

func (e *ElectionDelay) Name() string { return ElectionDelayFamily }

// Available needs a leader, a way to cut the network, and a way to delay
// messages on every link (tc netem, or chaos-node's hooks).
func (e *ElectionDelay) Available(ctx context.Context, c *Cluster) error {
	if err := requireRoles(ElectionDelayFamily, c, false, false); err != nil {
		return err
	}
	if err := cutAvailable(ctx, c); err != nil {
		return fmt.Errorf("%s: %w", ElectionDelayFamily, err)
	}
	p := &Packet{Behavior: e.behavior(1.5), HTTP: e.HTTP}
	return wrapFamily(ElectionDelayFamily, p.Available(ctx, c))
}

// Start delays every link between the nodes that answer, then cuts the
// leader off from them.
func (e *ElectionDelay) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	s := e.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	leader, view, err := answeringLeader(ctx, c)
	if err != nil {
		return Op{}, wrapFamily(ElectionDelayFamily, err)
	}
	v, err := s.begin()
	if err != nil {
		return Op{}, err
	}
	b := e.behavior(1.5 + 1.5*rng.Float64())
	v["leader"], v["delay_ms"], v["jitter_ms"] = leader, b.DelayMS, b.JitterMS
	up := partitionNames(view.Nodes)
	if err := s.degrade(ctx, view, b, amongLinks(up)); err != nil {
		return s.op(err)
	}
	err = s.cut.set(ctx, view, grudgeIsolate(up, leader))
	return s.op(err)
}

// behavior is a delay of k heartbeats (whole milliseconds) with a fifth of
// a heartbeat of jitter.
func (e *ElectionDelay) behavior(k float64) PacketBehavior {
	hb := e.Heartbeat
	if hb <= 0 {
		hb = 50 * time.Millisecond
	}
	ms := float64(hb.Milliseconds())
	return PacketBehavior{DelayMS: math.Round(k * ms), JitterMS: math.Round(ms / 5)}
}

// Stop heals the cut and the links.
func (e *ElectionDelay) Stop(ctx context.Context, c *Cluster) (Op, error) {
	return e.state().stop(ctx, c)
}

// Heal removes every cut and every link fault of the targeted faults.
func (e *ElectionDelay) Heal(ctx context.Context, c *Cluster) error { return e.state().heal(ctx, c) }

func (e *ElectionDelay) state() *sequence { return e.seq.setup(ElectionDelayFamily, e.HTTP, 0) }
