package nemesis

import (
	"context"
	"math/rand/v2"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/history"
)

// Kill is the kill family: SIGKILL on the chosen nodes (op "kill"); Stop
// starts them again and waits until each one's process answers (op
// "start"). A killed node restarts from its data directory, so it
// recovers what it had persisted and catches up from the leader.
//
// A restart waits on db.Up, never on the cluster's health: a node comes
// back while a majority of its peers is paused or cut off, and the wait is
// bounded by UpTimeout. A restart that fails or runs out of time leaves
// its node to Heal.
//
// Kill is safe for concurrent use; calls are serialized.
type Kill struct {
	// Targets are the target kinds Start picks among; empty means all.
	Targets []Target
	// Probe is the check around the kill.
	Probe Probe
	// UpTimeout bounds the wait for a restarted node's process to answer
	// (default DefaultUpTimeout).
	UpTimeout time.Duration

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
// node stays down, and Heal restarts it. With no active kill it does
// nothing and returns the zero Op.
func (k *Kill) Stop(ctx context.Context, c *Cluster) (Op, error) {
	return k.state.stop(ctx, c, injection{family: "kill", f: history.FStart, act: k.restart(c), restarts: true})
}

// Heal restarts the nodes this Kill took down and did not bring back:
// those whose restart failed or was cut short, and those no Stop has
// restarted. Each is sent SIGKILL first (a restart cut short may have left
// a process that never answered), then started, and waited for up to
// UpTimeout; a node it fails on is kept for the next Heal.
//
// A Kill that took no node down, such as the one `chaos heal` uses after
// a controller crash, does nothing: a process that no longer runs is not a
// fault left on its host, and it cannot be restarted without the run's
// configuration (binary, peers, bugs); the next run redeploys.
func (k *Kill) Heal(ctx context.Context, c *Cluster) error {
	k.state.mu.Lock()
	defer k.state.mu.Unlock()
	nodes := k.state.takeAll()
	if len(nodes) == 0 {
		return nil
	}
	again := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
		if err := d.Kill(ctx, r, n); err != nil {
			return err
		}
		return k.restart(c)(ctx, d, r, n)
	}
	failed, err := actOnEach(ctx, c, nodes, again)
	k.state.failed = failed
	return wrapFamily("kill", err)
}

// restart starts a node of c and waits until its process answers
// (restartNode: a node another family restarted already is no error).
func (k *Kill) restart(c *Cluster) nodeAction {
	return func(ctx context.Context, _ db.DB, r control.Remote, n db.Node) error {
		return restartNode(ctx, c, r, n, k.UpTimeout)
	}
}
