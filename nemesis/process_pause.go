package nemesis

import (
	"context"
	"math/rand/v2"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/history"
)

// Pause is the pause family: SIGSTOP on the chosen nodes (op "pause"); Stop
// sends SIGCONT and waits until each one's process answers again (op
// "resume"), never on the cluster's health. A paused node keeps its
// sockets open and its peers' messages queue up, which is the fault of a
// long GC pause or a VM freeze, unlike a kill.
//
// Pause is safe for concurrent use; calls are serialized.
type Pause struct {
	// Targets are the target kinds Start picks among; empty means all.
	Targets []Target
	// Probe is the check around the pause.
	Probe Probe
	// UpTimeout bounds the wait for a resumed node's process to answer
	// (default DefaultUpTimeout).
	UpTimeout time.Duration

	state processState
}

func (p *Pause) Name() string { return "pause" }

// Available reports an error when some node has no Remote to signal it
// through.
func (p *Pause) Available(_ context.Context, c *Cluster) error {
	return requireRemotes("pause", c)
}

// Start pauses the nodes of a target kind chosen with rng. The op's value
// names the nodes, the target kind and whether the pause was observed:
// every target answered before and stopped answering after.
func (p *Pause) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	pause := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error { return d.Pause(ctx, r, n) }
	return p.state.start(ctx, c, rng, injection{family: "pause", f: history.FPause, targets: p.Targets, probe: p.Probe, act: pause})
}

// Stop resumes every paused node and waits until each answers, except
// those that did not answer before the pause (a node also killed stays
// down: waiting for it would only cost UpTimeout). With no active pause
// it does nothing and returns the zero Op.
func (p *Pause) Stop(ctx context.Context, c *Cluster) (Op, error) {
	resume := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error { return d.Resume(ctx, r, n) }
	settle := func(ctx context.Context, d db.DB, n db.Node) error { return waitUp(ctx, d, n, p.UpTimeout) }
	return p.state.stop(ctx, c, injection{family: "pause", f: history.FResume, act: resume, settle: settle})
}

// Heal sends SIGCONT to the daemon of every node, paused or not (a node
// that does not run is no error), and forgets the active pause and the
// nodes a Stop failed on. It does not wait for the nodes to answer: a node
// that was also killed stays down.
func (p *Pause) Heal(ctx context.Context, c *Cluster) error {
	p.state.mu.Lock()
	defer p.state.mu.Unlock()
	p.state.takeAll()
	resume := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error { return d.Resume(ctx, r, n) }
	return wrapFamily("pause", actOn(ctx, c, c.Nodes, resume))
}
