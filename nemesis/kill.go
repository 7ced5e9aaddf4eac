package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/history"
)

// Kill is the kill family: SIGKILL on the chosen nodes (op "kill"); Stop
// starts them again and waits until they answer (op "start"). A killed
// node restarts from its data directory, so it recovers what it had
// persisted and catches up from the leader.
//
// Heal does nothing: a killed node is a process that no longer runs, not a
// fault left on its host. A run restarts the nodes it killed (Stop), and
// `chaos heal` after a controller crash cannot restart them without the
// run's configuration (binary, peers, bugs); the next run redeploys.
//
// Kill is safe for concurrent use; calls are serialized.
type Kill struct {
	// Targets are the target kinds Start picks among; empty means all.
	Targets []Target
	// Probe is the health check around the kill.
	Probe Probe
	// ReadyTimeout bounds the wait for a restarted node to answer
	// (default 30s).
	ReadyTimeout time.Duration

	state processState
}

func (k *Kill) Name() string { return "kill" }

// Available reports an error when some node has no Remote to kill it with.
func (k *Kill) Available(_ context.Context, c *Cluster) error {
	return requireRemotes("kill", c)
}

// Start kills the nodes of a target kind chosen with rng. The op's value
// names the nodes, the target kind and whether the kill was observed: every
// target answered before and stopped answering after. When some kill
// fails, the nodes stay recorded as killed, so that Stop restarts them.
func (k *Kill) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	kill := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error { return d.Kill(ctx, r, n) }
	return k.state.start(ctx, c, rng, injection{family: "kill", f: history.FKill, targets: k.Targets, probe: k.Probe, act: kill})
}

// Stop starts every killed node again and waits until each answers. It
// forgets the killed nodes even when a restart fails: the error says which
// node stays down. With no active kill it does nothing and returns the
// zero Op.
func (k *Kill) Stop(ctx context.Context, c *Cluster) (Op, error) {
	restart := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
		if err := d.Start(ctx, r, n); err != nil {
			return err
		}
		return waitReady(ctx, d, n, k.ReadyTimeout)
	}
	return k.state.stop(ctx, c, injection{family: "kill", f: history.FStart, act: restart})
}

// Heal does nothing; see Kill.
func (k *Kill) Heal(context.Context, *Cluster) error { return nil }

// Probe is the health check kill and pause run around a fault, as etcd's
// robustness tests do: a fault that did not take effect is reported, not
// assumed. A node answers when db.Ready succeeds within Timeout.
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
	return d.Ready(ctx, n) == nil
}

// stopsAnswering reports whether some check of n, of Tries spaced by Gap,
// fails.
func (p Probe) stopsAnswering(ctx context.Context, d db.DB, n db.Node) bool {
	for i := range p.Tries {
		if i > 0 && wait(ctx, p.Gap) != nil {
			return false
		}
		if !p.answers(ctx, d, n) {
			return true
		}
	}
	return false
}

// processValue is the value of kill, start, pause and resume ops.
type processValue struct {
	Nodes  []string `json:"nodes"`
	Mode   Target   `json:"mode,omitempty"`
	Effect string   `json:"effect,omitempty"`
	// Silent are targets that did not answer before the fault; Answering,
	// targets that still answered after it. Either makes the effect "not
	// observed".
	Silent    []string `json:"silent_before,omitempty"`
	Answering []string `json:"answering_after,omitempty"`
}

// injection is one step of a process fault: the op it records and what it
// does to each node.
type injection struct {
	family  string // the fault family, for errors
	f       string // the op name
	targets []Target
	probe   Probe
	act     nodeAction
}

// nodeAction acts on node n of system d through its host's Remote r.
type nodeAction func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error

// processState is the active fault of kill or pause: the nodes it acted on.
type processState struct {
	mu     sync.Mutex
	active []db.Node
}

// start picks the targets, checks that they answer, acts on each and
// checks that they stopped answering.
func (s *processState) start(ctx context.Context, c *Cluster, rng *rand.Rand, in injection) (Op, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.active) > 0 {
		return Op{}, fmt.Errorf("%s: a fault is active already on %v", in.family, names(s.active))
	}
	mode := pickTarget(in.targets, rng)
	nodes, err := SelectNodes(ctx, c, mode, rng)
	if err != nil {
		return Op{}, fmt.Errorf("%s: %w", in.family, err)
	}
	probe := in.probe.withDefaults()
	v := processValue{Nodes: names(nodes), Mode: mode}
	v.Silent = filterNodes(nodes, func(n db.Node) bool { return !probe.answers(ctx, c.DB, n) })
	s.active = nodes
	if err := actOn(ctx, c, nodes, in.act); err != nil {
		return Op{F: in.f, Value: v}, fmt.Errorf("%s: %w", in.family, err)
	}
	v.Answering = filterNodes(nodes, func(n db.Node) bool { return !probe.stopsAnswering(ctx, c.DB, n) })
	v.Effect = EffectObserved
	if len(v.Silent)+len(v.Answering) > 0 {
		v.Effect = EffectNotObserved
	}
	return Op{F: in.f, Value: v}, nil
}

// stop undoes the active fault on every node it acted on and forgets it.
func (s *processState) stop(ctx context.Context, c *Cluster, in injection) (Op, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := s.active
	s.active = nil
	if len(nodes) == 0 {
		return Op{}, nil
	}
	op := Op{F: in.f, Value: processValue{Nodes: names(nodes)}}
	if err := actOn(ctx, c, nodes, in.act); err != nil {
		return op, fmt.Errorf("%s: %w", in.family, err)
	}
	return op, nil
}

// actOn runs act on every node, concurrently, through its Remote.
func actOn(ctx context.Context, c *Cluster, nodes []db.Node, act nodeAction) error {
	return eachNode(nodes, func(n db.Node) error {
		r, err := nodeRemote(c, n)
		if err != nil {
			return err
		}
		return act(ctx, c.DB, r, n)
	})
}

// filterNodes returns the names of the nodes keep accepts, in order; keep
// runs for every node concurrently.
func filterNodes(nodes []db.Node, keep func(db.Node) bool) []string {
	kept, _ := mapNodes(nodes, func(n db.Node) (bool, error) { return keep(n), nil })
	var out []string
	for i, n := range nodes {
		if kept[i] {
			out = append(out, n.Name)
		}
	}
	return out
}

// waitReady waits up to timeout (default 30s) for n to answer.
func waitReady(ctx context.Context, d db.DB, n db.Node, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return d.Ready(ctx, n)
}

// requireRemotes reports the first node of c without a Remote.
func requireRemotes(family string, c *Cluster) error {
	if len(c.Nodes) == 0 {
		return fmt.Errorf("%s: the cluster has no nodes", family)
	}
	for _, n := range c.Nodes {
		if _, err := nodeRemote(c, n); err != nil {
			return fmt.Errorf("%s: %w", family, err)
		}
	}
	return nil
}

// wait blocks for d or until ctx ends, whichever comes first, and returns
// ctx's error in the second case.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
