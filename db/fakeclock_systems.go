package db

import (
	"context"

	"chaos/control"
	"chaos/internal/fakeclock"
)

// The built-in systems' fake clocks: chaos-node reads its control file
// itself; etcd is a Go program, which libfaketime cannot reach, and says
// so.

var (
	_ FakeClocker = (*ChaosNode)(nil)
	_ FakeClocker = (*Etcd)(nil)
)

func (c *ChaosNode) ClockFile(n Node) string { return ClockFileIn(c.Layout.NodeDir(chaosNodeName, n)) }

// FakeClock: chaos-node reads its control file natively.
func (c *ChaosNode) FakeClock(_ context.Context, _ control.Remote, n Node) (FakeClock, error) {
	if !c.Faketime {
		return FakeClock{}, ErrNoFakeClock
	}
	return FakeClock{File: c.ClockFile(n), Mechanism: fakeclock.Native}, nil
}

func (e *Etcd) ClockFile(n Node) string { return ClockFileIn(e.Layout.NodeDir(etcdName, n)) }

// FakeClock inspects the etcd binary: the uploaded one (--binary), or
// the host's.
func (e *Etcd) FakeClock(ctx context.Context, r control.Remote, n Node) (FakeClock, error) {
	if !e.Faketime {
		return FakeClock{}, ErrNoFakeClock
	}
	return e.fakeClocks.Get(ctx, n, func() (FakeClock, error) {
		return ProbeFakeClock(ctx, r, e.ClockFile(n), func() (string, error) {
			if e.Binary != "" {
				return ClockReach(e.Binary)
			}
			return HostClockReach(ctx, r, "etcd", &e.reach)
		})
	})
}
