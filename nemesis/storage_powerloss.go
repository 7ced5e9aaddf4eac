package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/faultfs"
	"chaos/history/faultrec"
)

// PowerLoss is the power-loss family: the chosen nodes lose power. Each is
// sent SIGKILL, then its fault file system drops everything that was not
// durable (files back to their fsynced length and bytes, names back to
// their state at their directory's last fsync): op "start-power-loss".
// The nodes stay down until Stop starts them again and waits until each
// one's process answers (op "stop-power-loss"). Targets are kill's: one, a
// minority, a majority, all (a coordinated power failure) or the leader.
//
// A node that acknowledged before its data was durable comes back without
// it. A power loss that cannot be done (the file system does not answer,
// or the node's files are still open) leaves the node killed, recorded as
// down, so that Stop and Heal restart it.
//
// PowerLoss is safe for concurrent use; calls are serialized.
type PowerLoss struct {
	// Targets are the target kinds Start picks among; empty means all.
	Targets []Target
	// Probe is the check around the kill.
	Probe Probe
	// UpTimeout bounds the wait for a restarted node's process to answer
	// (default DefaultUpTimeout).
	UpTimeout time.Duration

	state processState
}

func (p *PowerLoss) Name() string { return PowerLossFamily }

// Available reports why the nodes cannot lose power here: their data
// directories must be served through the fault file system (see
// StorageAvailable).
func (p *PowerLoss) Available(ctx context.Context, c *Cluster) error {
	return storageAvailable(ctx, PowerLossFamily, c)
}

// Start kills the nodes of a target kind chosen with rng and drops what
// their file systems hold that is not durable.
func (p *PowerLoss) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	var mu sync.Mutex
	dropped := map[string]faultrec.DiskStatus{}
	act := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
		m, err := storageMount(c, n)
		if err != nil {
			return err
		}
		if err := d.Kill(ctx, r, n); err != nil {
			return err
		}
		res, err := m.Host().PowerLoss(ctx, r)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		dropped[n.Name] = diskStatus(res.Dropped)
		return nil
	}
	op, err := p.state.start(ctx, c, rng, injection{family: PowerLossFamily, f: "start-" + PowerLossFamily,
		targets: p.Targets, probe: p.Probe, act: act})
	if v, ok := op.Value.(faultrec.Process); ok {
		op.Value = faultrec.PowerLoss{Process: v, Dropped: dropped}
	}
	return op, err
}

// Stop starts every node that lost power and waits until each answers;
// a node it fails on is left to Heal.
func (p *PowerLoss) Stop(ctx context.Context, c *Cluster) (Op, error) {
	return p.state.stop(ctx, c, injection{family: PowerLossFamily, f: "stop-" + PowerLossFamily, act: p.restart(c), restarts: true})
}

// Heal restarts the nodes this PowerLoss took down and did not bring back,
// as Kill's Heal does; a PowerLoss that took none down does nothing (the
// file systems are healed by storageHeal).
func (p *PowerLoss) Heal(ctx context.Context, c *Cluster) error {
	return healDown(ctx, c, &p.state, PowerLossFamily, p.UpTimeout)
}

// restart starts a node of c and waits until its process answers.
func (p *PowerLoss) restart(c *Cluster) nodeAction {
	return func(ctx context.Context, _ db.DB, r control.Remote, n db.Node) error {
		return restartNode(ctx, c, r, n, p.UpTimeout)
	}
}

// restartNode starts n, puts back the network faults in force on it that
// its start lost (a container that is the node comes back in a new
// network namespace: see net_reapply.go), and waits until its process
// answers. A node that runs already is no error: two families may take
// the same node down (kill and power-loss pick their targets each on its
// own), and the one that ends first restarts it for both.
func restartNode(ctx context.Context, c *Cluster, r control.Remote, n db.Node, upTimeout time.Duration) error {
	if err := c.DB.Start(ctx, r, n); err != nil && !errors.Is(err, db.ErrAlreadyRunning) {
		return err
	}
	if _, err := c.reapplyNet(ctx, r, n); err != nil {
		return err
	}
	return waitUp(ctx, c.DB, n, upTimeout)
}

// healDown restarts the nodes s took down and did not bring back: each is
// sent SIGKILL first (a restart cut short may have left a process that
// never answered), then started and waited for; those it fails on are
// kept for the next heal.
func healDown(ctx context.Context, c *Cluster, s *processState, family string, upTimeout time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := s.takeAll()
	if len(nodes) == 0 {
		return nil
	}
	again := func(ctx context.Context, d db.DB, r control.Remote, n db.Node) error {
		if err := d.Kill(ctx, r, n); err != nil {
			return err
		}
		return restartNode(ctx, c, r, n, upTimeout)
	}
	failed, err := actOnEach(ctx, c, nodes, again)
	s.failed = failed
	return wrapFamily(family, err)
}

// diskStatus is a fault file system's status as a fault record holds it.
func diskStatus(s faultfs.Status) faultrec.DiskStatus {
	out := faultrec.DiskStatus{PendingFiles: s.PendingFiles, UndoBytes: s.UndoBytes,
		UndoMemoryBytes: s.UndoMemoryBytes, UndoSpilledBytes: s.UndoSpilledBytes, UndoRefused: s.UndoRefused,
		PendingNames: s.PendingNames}
	if s.Errors != nil {
		out.Errors = &faultrec.DiskErrorMode{Kind: s.Errors.Kind, On: s.Errors.On}
		if s.Errors.Until != nil {
			// As encoding/json writes a time.
			out.Errors.Until = json.RawMessage(`"` + s.Errors.Until.Format(time.RFC3339Nano) + `"`)
		}
	}
	return out
}
