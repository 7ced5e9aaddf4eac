package db

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"chaos/control"
	"chaos/internal/fakeclock"
)

// Fake clocks (the clock family's faketime strategy): a node started
// under one reads its time from a control file in its node directory
// (package fakeclock) instead of its host's clock, so that chaos can bump,
// strobe and slow each node's clock without touching the host's, which in
// local mode and on the testbed is the controller's own. Config.Faketime
// asks a system to start its nodes so.

// FakeClock is how one node's clock is faked.
type FakeClock struct {
	// File is the node's control file on its host.
	File string
	// Mechanism is who reads it: fakeclock.Libfaketime or fakeclock.Native.
	Mechanism string
	// Lib is libfaketime's path on the host (Libfaketime only).
	Lib string
}

// FakeClocker is a system that can start its nodes under a fake clock.
type FakeClocker interface {
	// ClockFile is n's control file on its host, whether or not n runs
	// under a fake clock; heals reset it where it exists.
	ClockFile(n Node) string
	// FakeClock says how n's clock is faked, or why it is not: the
	// system was not configured with Config.Faketime, its program cannot
	// be reached by libfaketime (statically linked, a Go program), or
	// libfaketime is missing on the host. Its answer is the same for the
	// life of the system, and Start follows it: a node whose clock cannot
	// be faked starts as it would without Config.Faketime.
	FakeClock(ctx context.Context, r control.Remote, n Node) (FakeClock, error)
}

// clockFileName is the control file's name in a node's directory.
const clockFileName = "faketimerc"

// ClockFileIn is the control file of a node whose directory is dir.
func ClockFileIn(dir string) string { return path.Join(dir, clockFileName) }

// ErrNoFakeClock is why a system configured without Config.Faketime has
// no fake clock.
var ErrNoFakeClock = errors.New("the nodes were started without a fake clock (--clock-strategy faketime starts them under one)")

// FakeClocks remembers each node's FakeClock answer, so that the clock
// family, the lease family and Start see the same one and a binary is
// inspected once. Safe for concurrent use; the zero value is ready.
type FakeClocks struct {
	mu    sync.Mutex
	nodes map[string]fakeClockAnswer
}

type fakeClockAnswer struct {
	fc  FakeClock
	err error
}

// Get returns n's answer, asking probe the first time. An error of ctx
// (the probe was cut short) is not remembered.
func (c *FakeClocks) Get(ctx context.Context, n Node, probe func() (FakeClock, error)) (FakeClock, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.nodes[n.Name]; ok {
		return a.fc, a.err
	}
	fc, err := probe()
	if err != nil && ctx.Err() != nil {
		return fc, err
	}
	if c.nodes == nil {
		c.nodes = map[string]fakeClockAnswer{}
	}
	c.nodes[n.Name] = fakeClockAnswer{fc, err}
	return fc, err
}

// ProbeFakeClock finds how a node whose control file is file and whose
// program is reach's can run under a fake clock on r's host: natively
// (chaos-node), or through libfaketime, which it then looks for on the
// host.
func ProbeFakeClock(ctx context.Context, r control.Remote, file string, reach func() (string, error)) (FakeClock, error) {
	mech, err := reach()
	if err != nil {
		return FakeClock{}, err
	}
	fc := FakeClock{File: file, Mechanism: mech}
	if mech != fakeclock.Libfaketime {
		return fc, nil
	}
	res, err := r.Run(ctx, findLibfaketimeCmd)
	if err != nil {
		return FakeClock{}, fmt.Errorf("look for libfaketime: %w", err)
	}
	lib, _, _ := strings.Cut(strings.TrimSpace(string(res.Stdout)), "\n")
	if res.ExitCode != 0 || lib == "" {
		return FakeClock{}, errors.New("libfaketime is not installed on the host (apt-get install -y libfaketime)")
	}
	fc.Lib = lib
	return fc, nil
}

// StartClock is the fake clock a system's Start starts n under: c's
// FakeClock when the system was configured with one (fake) and n's clock
// can be faked, else nil (n starts as it would without one).
func StartClock(ctx context.Context, fake bool, c FakeClocker, r control.Remote, n Node) *FakeClock {
	if !fake {
		return nil
	}
	fc, err := c.FakeClock(ctx, r, n)
	if err != nil {
		return nil
	}
	return &fc
}
