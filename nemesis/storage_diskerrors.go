package nemesis

import (
	"chaos/history/faultrec"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/faultfs"
)

// DiskErrors is the disk-full family (Kind faultfs.KindENOSPC) and the eio
// family (faultfs.KindEIO): on one node chosen at random, the fault file
// system makes writes, fsyncs or both fail with the error (op
// "start-disk-full" or "start-eio") until Stop ends it (op
// "stop-disk-full" or "stop-eio"). A node that died of the errors (a
// system may rightly crash when an fsync fails) is started again by Stop,
// once the errors are gone, so that the run goes on with it.
//
// DiskErrors is safe for concurrent use; calls are serialized.
type DiskErrors struct {
	// Kind is faultfs.KindENOSPC (disk-full) or faultfs.KindEIO (eio).
	Kind string
	// On are what Start picks among to fail: faultfs.OnWrites, OnFsyncs,
	// OnBoth; empty means all three.
	On []string
	// UpTimeout bounds the wait for a restarted node's process to answer
	// (default DefaultUpTimeout).
	UpTimeout time.Duration

	mu     sync.Mutex
	active []db.Node
}

// Name is disk-full for ENOSPC, eio for EIO.
func (e *DiskErrors) Name() string {
	if e.Kind == faultfs.KindEIO {
		return EIOFamily
	}
	return DiskFullFamily
}

// Available reports why the errors cannot be injected here: the data
// directories must be served through the fault file system (see
// StorageAvailable).
func (e *DiskErrors) Available(ctx context.Context, c *Cluster) error {
	if err := (faultfs.ErrorMode{Kind: e.Kind, On: faultfs.OnBoth}).Validate(); err != nil {
		return fmt.Errorf("%s: %w", e.Name(), err)
	}
	return storageAvailable(ctx, e.Name(), c)
}

// Start makes writes, fsyncs or both (chosen with rng) fail on one node
// chosen with rng, until Stop.
func (e *DiskErrors) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.active) > 0 {
		return Op{}, fmt.Errorf("%s: a fault is active already on %v", e.Name(), names(e.active))
	}
	if len(c.Nodes) == 0 {
		return Op{}, fmt.Errorf("%s: the cluster has no nodes", e.Name())
	}
	on := e.on()
	nodes := sample(c.Nodes, 1, rng)
	v := faultrec.DiskErrors{Nodes: names(nodes), Kind: e.Kind, On: on[rng.IntN(len(on))]}
	op := Op{F: "start-" + e.Name(), Value: v}
	m, r, err := e.mount(c, nodes[0])
	if err != nil {
		return Op{}, err
	}
	e.active = nodes // a request that failed half-way may have set them
	if _, err := m.Host().SetErrors(ctx, r, faultfs.ErrorsRequest{Kind: e.Kind, On: v.On}); err != nil {
		return op, fmt.Errorf("%s: %s: %w", e.Name(), nodes[0].Name, err)
	}
	return op, nil
}

// on are what Start picks among.
func (e *DiskErrors) on() []string {
	if len(e.On) == 0 {
		return []string{faultfs.OnWrites, faultfs.OnFsyncs, faultfs.OnBoth}
	}
	return e.On
}

// mount is n's mount and its host's Remote.
func (e *DiskErrors) mount(c *Cluster, n db.Node) (db.StorageMount, control.Remote, error) {
	m, err := storageMount(c, n)
	if err != nil {
		return m, nil, fmt.Errorf("%s: %s: %w", e.Name(), n.Name, err)
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return m, nil, fmt.Errorf("%s: %w", e.Name(), err)
	}
	return m, r, nil
}

// Stop ends the errors and starts the node again if it no longer
// answers. With no active fault it does nothing and returns the zero Op.
func (e *DiskErrors) Stop(ctx context.Context, c *Cluster) (Op, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	nodes := e.active
	if len(nodes) == 0 {
		return Op{}, nil
	}
	v, err := e.clear(ctx, c, nodes)
	if err == nil {
		e.active = nil
	}
	return Op{F: "stop-" + e.Name(), Value: v}, err
}

// Heal ends the errors this DiskErrors injected and did not end (the file
// systems of an earlier run are healed by storageHeal).
func (e *DiskErrors) Heal(ctx context.Context, c *Cluster) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.active) == 0 {
		return nil
	}
	if _, err := e.clear(ctx, c, e.active); err != nil {
		return err
	}
	e.active = nil
	return nil
}

// clear ends the errors on nodes, then restarts those that do not
// answer.
func (e *DiskErrors) clear(ctx context.Context, c *Cluster, nodes []db.Node) (faultrec.DiskErrors, error) {
	v := faultrec.DiskErrors{Nodes: names(nodes)}
	var mu sync.Mutex
	err := eachNode(nodes, func(n db.Node) error {
		m, r, err := e.mount(c, n)
		if err != nil {
			return err
		}
		if _, err := m.Host().ClearErrors(ctx, r); err != nil {
			return fmt.Errorf("%s: %s: %w", e.Name(), n.Name, err)
		}
		if c.DB.Up(ctx, n) == nil {
			return nil
		}
		mu.Lock()
		v.Restarted = append(v.Restarted, n.Name)
		mu.Unlock()
		if err := c.DB.Kill(ctx, r, n); err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		return wrapFamily(e.Name(), restartNode(ctx, c, r, n, e.UpTimeout))
	})
	return v, err
}
