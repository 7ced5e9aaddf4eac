package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
)

// The targeted faults share what follows: each runs a short sequence of
// steps inside one Start (bounded by the schedule's step timeout, and
// cut short when ctx ends), aimed at roles the cluster reports, and
// leaves in place what its Stop and Heal undo: a network cut, degraded
// links, a skewed clock, a node killed. Their ops are "start-<family>" and
// "stop-<family>", whose value records each step and what it found.

// sequence is the state of one targeted fault between its Start and its
// Stop. Its mutex serializes the family's calls.
type sequence struct {
	family string
	// UpTimeout bounds the wait for a restarted node to answer (default
	// DefaultUpTimeout).
	UpTimeout time.Duration

	once   sync.Once
	mu     sync.Mutex
	value  *faultrec.Targeted // the op value of the active fault, nil when none
	cut    netCut
	links  Packet    // the degraded links' fault, kept for its probe of the hosts
	slowed bool      // links is active
	clocks []string  // nodes whose clock hook was set
	fakes  []string  // nodes whose fake clock was set (clock_faketime.go)
	vdsos  []string  // nodes whose processes' clocks were patched (clock_vdso.go)
	splits []string  // nodes whose append limit hook was set
	down   []db.Node // nodes killed and not yet restarted
}

// setup names the family, once, before any use.
func (s *sequence) setup(family string, upTimeout time.Duration) *sequence {
	s.once.Do(func() { s.family, s.UpTimeout = family, upTimeout })
	return s
}

// begin starts a fault of the family: it fails when one is active
// already, and otherwise returns the new op value, which the steps fill
// in. The caller holds mu.
func (s *sequence) begin() (*faultrec.Targeted, error) {
	if s.value != nil {
		return nil, fmt.Errorf("%s: a fault is active already; stop it first", s.family)
	}
	s.value = &faultrec.Targeted{}
	s.cut.owner = s.family
	return s.value, nil
}

// op is the start op of the active fault, with the cut in place under
// "cut", and err wrapped in the family.
func (s *sequence) op(err error) (Op, error) {
	if s.cut.mech != "" {
		s.value.Cut = new(s.cut.value())
	}
	return Op{F: "start-" + s.family, Value: *s.value}, wrapFamily(s.family, err)
}

// finish ends a sequence that leaves nothing in place: it records the cut
// as it was under "cut", then restarts the killed nodes, heals the cut and
// restores the links and clocks, and returns the start op with err (and
// the undo's errors). The fault stays active for the schedule; its Stop
// has nothing left to undo.
func (s *sequence) finish(ctx context.Context, c *Cluster, err error) (Op, error) {
	op, err := s.op(err)
	return op, errors.Join(err, wrapFamily(s.family, s.undo(ctx, c, false)))
}

// stop undoes everything the active fault left: it restarts the killed
// nodes, heals the cut, restores the links and resets the clocks, and
// returns "stop-<family>" with the start's value. With no fault active it
// does nothing and returns the zero Op. The fault is over even when a step
// fails; Heal retries what it left.
func (s *sequence) stop(ctx context.Context, c *Cluster) (Op, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.value == nil {
		return Op{}, nil
	}
	op := Op{F: "stop-" + s.family, Value: *s.value}
	s.value = nil
	return op, wrapFamily(s.family, s.undo(ctx, c, false))
}

// heal undoes what a fault of the family can leave on every node, whether
// or not this process injected it: the cut on every mechanism, the clock
// hooks and the hook network faults of every node, and it restarts the
// nodes this value killed. Idempotent.
func (s *sequence) heal(ctx context.Context, c *Cluster) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.value = nil
	return wrapFamily(s.family, s.undo(ctx, c, true))
}

// undo restarts the killed nodes first (so that they answer the hooks),
// then heals the cut, the links and the clocks: those the fault set, or
// every node's when all.
func (s *sequence) undo(ctx context.Context, c *Cluster, all bool) error {
	var errs []error
	if len(s.down) > 0 {
		failed, err := actOnEach(ctx, c, s.down, s.restart(c))
		s.noteReapplied(c, names(s.down))
		s.down = failed
		errs = append(errs, err)
	}
	if all {
		errs = append(errs, s.cut.heal(ctx, c))
	} else {
		errs = append(errs, s.cut.stop(ctx, c))
	}
	if all {
		errs = append(errs, s.links.Heal(ctx, c))
		s.slowed = false
	} else {
		errs = append(errs, s.stopLinks(ctx, c))
	}
	clocks := s.clocks
	if all {
		clocks = partitionNames(c.Nodes)
	}
	errs = append(errs, s.resetClocks(ctx, c, clocks))
	s.clocks = nil
	fakes := s.fakes
	if all {
		fakes = partitionNames(c.Nodes)
	}
	errs = append(errs, resetFakeClocks(ctx, c, fakes))
	s.fakes = nil
	vdsos := s.vdsos
	if all {
		vdsos = partitionNames(c.Nodes)
	}
	errs = append(errs, resetVDSOClocks(ctx, c, vdsos))
	s.vdsos = nil
	splits := s.splits
	if all {
		splits = partitionNames(c.Nodes)
	}
	errs = append(errs, s.resetAppends(ctx, c, splits))
	s.splits = nil
	return errors.Join(errs...)
}

// kill sends SIGKILL to node and remembers it until a restart.
func (s *sequence) kill(ctx context.Context, c *Cluster, node string) error {
	n, r, err := nodeAndRemote(c, node)
	if err != nil {
		return err
	}
	if !slices.Contains(s.down, n) {
		s.down = append(s.down, n)
	}
	return c.DB.Kill(ctx, r, n)
}

// restartNode starts a node kill took down and waits until it answers.
func (s *sequence) restartNode(ctx context.Context, c *Cluster, node string) error {
	n, r, err := nodeAndRemote(c, node)
	if err != nil {
		return err
	}
	err = s.restart(c)(ctx, c.DB, r, n)
	s.noteReapplied(c, []string{node})
	if err != nil {
		return err
	}
	s.down = slices.DeleteFunc(s.down, func(d db.Node) bool { return d == n })
	return nil
}

// noteReapplied records in the active fault's value what restarts of
// nodes put back (see reapplyNet).
func (s *sequence) noteReapplied(c *Cluster, nodes []string) {
	what := c.ruleTable().take(nodes)
	if s.value == nil || len(what) == 0 {
		return
	}
	if s.value.Reapplied == nil {
		s.value.Reapplied = map[string][]string{}
	}
	for n, w := range what {
		s.value.Reapplied[n] = append(s.value.Reapplied[n], w...)
	}
}

// restart starts a node of c, puts back the network faults in force on
// it that its start lost (see restartNode), and waits until its process
// answers.
func (s *sequence) restart(c *Cluster) nodeAction {
	return func(ctx context.Context, _ db.DB, r control.Remote, n db.Node) error {
		if err := c.DB.Start(ctx, r, n); err != nil {
			return err
		}
		if _, err := c.reapplyNet(ctx, r, n); err != nil {
			return err
		}
		return waitUp(ctx, c.DB, n, s.UpTimeout)
	}
}

// degrade degrades links with b (a Packet of the sequence's own), and
// records the packet op's value under "links".
func (s *sequence) degrade(ctx context.Context, c *Cluster, b PacketBehavior, links PacketLinks) error {
	s.links.Behavior = b
	s.links.Links = func(context.Context, *Cluster, *rand.Rand) (PacketLinks, error) { return links, nil }
	op, err := s.links.Start(ctx, c, nil)
	if err != nil {
		return err
	}
	s.slowed = true
	if links, ok := op.Value.(*faultrec.Packet); ok {
		s.value.Links = links
	}
	return nil
}

// stopLinks restores the links degrade degraded, if any.
func (s *sequence) stopLinks(ctx context.Context, c *Cluster) error {
	if !s.slowed {
		return nil
	}
	s.slowed = false
	_, err := s.links.Stop(ctx, c)
	return err
}

// setRate makes node's raft ticker run at rate times true time, through
// its clock hook, and reports the rate the node answers with.
func (s *sequence) setRate(ctx context.Context, c *Cluster, node string, rate float64) (float64, error) {
	if !hooked(c, node) {
		return 0, fmt.Errorf("%s: the node has no fault hooks", node)
	}
	s.clocks = append(s.clocks, node)
	f, err := c.Hooks.SetClock(ctx, node, db.ClockSkew{Rate: rate})
	return f.Rate, err
}

// resetClocks resets the clock hooks of nodes (those without hooks, or
// down, have no skew).
func (s *sequence) resetClocks(ctx context.Context, c *Cluster, nodes []string) error {
	return healHooks(c, nodes, func(h db.Hooks, n string) error { return h.ResetClock(ctx, n) })
}

// noHooks is what an op value records for a step that needs fault hooks
// on a system without them.
const noHooks = "unavailable: no fault hooks"

// splitAppends makes every node with fault hooks send one entry per append
// message, and the next only once the one before is acknowledged (nodes
// without hooks, etcd's say, keep their own batching), and records the
// nodes it reached under "split_appends"; on a system without hooks,
// "append_limit" says so.
func (s *sequence) splitAppends(ctx context.Context, c *Cluster) error {
	if c.Hooks == nil {
		s.value.AppendLimit = noHooks
		return nil
	}
	for _, n := range partitionNames(c.Nodes) {
		if !hooked(c, n) {
			continue
		}
		s.splits = append(s.splits, n)
		if err := c.Hooks.SetAppendLimit(ctx, n, db.AppendLimit{MaxBytes: 1, MaxInflight: 1}); err != nil {
			return err
		}
	}
	s.value.SplitAppends = slices.Clone(s.splits)
	return nil
}

// resetAppends puts back the append limits of nodes (those without hooks,
// or down, have none set).
func (s *sequence) resetAppends(ctx context.Context, c *Cluster, nodes []string) error {
	return healHooks(c, nodes, func(h db.Hooks, n string) error { return h.ResetAppendLimit(ctx, n) })
}

// healHooks sends a hook request that removes a fault (a db.Hooks Clear
// or Reset method) to each of nodes that has fault hooks.
func healHooks(c *Cluster, nodes []string, heal func(h db.Hooks, node string) error) error {
	var errs []error
	for _, n := range nodes {
		if hooked(c, n) {
			errs = append(errs, heal(c.Hooks, n))
		}
	}
	return errors.Join(errs...)
}

// nodeByName is c's node called name.
func nodeByName(c *Cluster, name string) (db.Node, error) {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return db.Node{}, fmt.Errorf("%q is not a node of the cluster", name)
}

// nodeAndRemote is c's node called name and the Remote of its host.
func nodeAndRemote(c *Cluster, name string) (db.Node, control.Remote, error) {
	n, err := nodeByName(c, name)
	if err != nil {
		return n, nil, err
	}
	r, err := nodeRemote(c, n)
	return n, r, err
}

// delayHeartbeats is the default delay of the links a sequence slows
// (vote-restart's, figure8's), in heartbeats: between a message and its
// answer there is time for the sequence to act (kill a voter, cut a new
// leader off), and a correct cluster's elections still do not split the
// vote round after round. For chaos-node (50 ms) it is 80 ms.
const delayHeartbeats = 1.6

// sequenceDelayMS is the delay ms a family was given, or else
// delayHeartbeats of c's heartbeat, in whole milliseconds.
func sequenceDelayMS(c *Cluster, ms float64) float64 {
	if ms > 0 {
		return ms
	}
	return math.Round(delayHeartbeats * float64(heartbeatOf(c, 0).Milliseconds()))
}
