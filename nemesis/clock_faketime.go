package nemesis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
	"chaos/internal/fakeclock"
	"chaos/nemesis/hostcmd"
)

// The faketime clock strategy: the nodes run under a fake clock (see
// db.FakeClocker), each reading its time from a control file in its node
// directory (package fakeclock), and the clock family and the lease
// family bend a node's clock by rewriting that file on its host. The
// host's clock is never touched, so the strategy is safe on hosts that
// share the controller's clock. A reset writes the true clock ("+0 x1");
// Heal does so on every node whose file exists, whoever changed it.

// errNoFakeClocker is why a system without the FakeClocks capability has
// no faketime strategy.
func errNoFakeClocker(c *Cluster) error {
	return fmt.Errorf("%s cannot start its nodes under a fake clock (no FakeClocks capability)", systemName(c))
}

// fakeAvailable says why the faketime strategy cannot run on c: the
// system cannot fake clocks, or some node's clock cannot be faked (its
// program, libfaketime on its host, the run's configuration).
func fakeAvailable(ctx context.Context, c *Cluster) error {
	fc := c.FakeClocks
	if fc == nil {
		return errors.New("the faketime strategy needs a system that can start its nodes under a fake clock (no FakeClocks capability)")
	}
	if len(c.Nodes) == 0 {
		return errors.New("the cluster has no nodes")
	}
	for _, n := range c.Nodes {
		r, err := nodeRemote(c, n)
		if err != nil {
			return err
		}
		if _, err := fc.FakeClock(ctx, r, n); err != nil {
			return fmt.Errorf("faketime: %s: %w", n.Name, err)
		}
	}
	return nil
}

// fakeClockOf is n's fake clock and the Remote of its host.
func fakeClockOf(ctx context.Context, c *Cluster, n db.Node) (db.FakeClock, control.Remote, error) {
	fc := c.FakeClocks
	if fc == nil {
		return db.FakeClock{}, nil, errNoFakeClocker(c)
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return db.FakeClock{}, nil, err
	}
	clock, err := fc.FakeClock(ctx, r, n)
	if err != nil {
		return db.FakeClock{}, nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	return clock, r, nil
}

// changeFakeClock rewrites n's control file with change, which gets the
// file as it is and the host's clock, and returns the file written. The
// file is replaced whole (a rename), so a reader never sees half of it.
func changeFakeClock(ctx context.Context, c *Cluster, n db.Node, change func(f fakeclock.File, now time.Time, mech string) (fakeclock.File, error)) (fakeclock.File, error) {
	fc, r, err := fakeClockOf(ctx, c, n)
	if err != nil {
		return fakeclock.File{}, err
	}
	out, err := control.Output(ctx, r, hostcmd.FakeClockReadCmd(fc.File))
	if err != nil {
		return fakeclock.File{}, fmt.Errorf("%s: read %s: %w", n.Name, fc.File, err)
	}
	stamp, content, _ := strings.Cut(string(out), "\n")
	now, err := fakeclock.ParseUnix(stamp)
	if err != nil {
		return fakeclock.File{}, fmt.Errorf("%s: the host's clock (date +%%s.%%N): %w", n.Name, err)
	}
	f, err := fakeclock.Parse([]byte(content))
	if err == nil {
		f, err = change(f, now, fc.Mechanism)
	}
	if err != nil {
		return fakeclock.File{}, fmt.Errorf("%s: %s: %w", n.Name, fc.File, err)
	}
	if err := writeFakeClock(ctx, r, fc.File, f); err != nil {
		return fakeclock.File{}, fmt.Errorf("%s: %w", n.Name, err)
	}
	return f, nil
}

// writeFakeClock replaces the control file name on r's host with f.
func writeFakeClock(ctx context.Context, r control.Remote, name string, f fakeclock.File) error {
	if _, err := control.Output(ctx, r, hostcmd.ReplaceFileCmd(name, f.Format())); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// fakeBump moves n's fake clock by ms.
func fakeBump(ctx context.Context, c *Cluster, n db.Node, ms int64) error {
	_, err := changeFakeClock(ctx, c, n, func(f fakeclock.File, _ time.Time, _ string) (fakeclock.File, error) {
		return f.Bump(time.Duration(ms) * time.Millisecond), nil
	})
	return err
}

// fakeRate makes n's fake clock run at rate from now on, and returns the
// rate its file holds.
func fakeRate(ctx context.Context, c *Cluster, n db.Node, rate float64) (float64, error) {
	f, err := changeFakeClock(ctx, c, n, func(f fakeclock.File, now time.Time, mech string) (fakeclock.File, error) {
		return f.WithRate(rate, now, mech)
	})
	return f.Rate, err
}

// fakeReset puts the true clock back in n's control file, if it has one.
// It needs no fake clock in this run: Heal resets what a run before left.
func fakeReset(ctx context.Context, c *Cluster, n db.Node) error {
	fc := c.FakeClocks
	if fc == nil {
		return nil
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return err
	}
	name := fc.ClockFile(n)
	if _, err := control.Output(ctx, r, hostcmd.FakeResetCmd(name)); err != nil {
		return fmt.Errorf("%s: reset %s: %w", n.Name, name, err)
	}
	return nil
}

// fakeLeftover names n's control file when it holds a clock other than
// the true one ("fake clock +1.5 x1 in /var/lib/chaos/etcd/n1/faketimerc").
func fakeLeftover(ctx context.Context, c *Cluster, n db.Node) ([]string, error) {
	fc := c.FakeClocks
	if fc == nil {
		return nil, nil
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return nil, err
	}
	name := fc.ClockFile(n)
	out, err := control.Output(ctx, r, hostcmd.CatIfExistsCmd(name))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	f, err := fakeclock.Parse(out)
	if err != nil {
		return []string{fmt.Sprintf("fake clock file %s unreadable (%v)", name, err)}, nil
	}
	if f.IsReset() {
		return nil, nil
	}
	return []string{fmt.Sprintf("fake clock %s in %s", fakeclock.Spec{Offset: f.Offset, Rate: f.Rate}, name)}, nil
}

// fakeApply carries the clock fault v out on n by rewriting its control
// file: a rate, or the jumps of a bump or strobe (waiting the strobe's
// period between two), and records who reads the file.
func (k *Clock) fakeApply(ctx context.Context, c *Cluster, n db.Node, v *faultrec.Clock) error {
	if v.Kind == clockRate {
		_, err := fakeRate(ctx, c, n, v.Rates[n.Name])
		return err
	}
	for i, ms := range clockJumps(v, n.Name) {
		if i > 0 {
			if err := k.wait(ctx, time.Duration(v.PeriodMS)*time.Millisecond); err != nil {
				return fmt.Errorf("%s: strobe: %w", n.Name, err)
			}
		}
		if err := fakeBump(ctx, c, n, ms); err != nil {
			return err
		}
	}
	return nil
}

// fakeReaders says who reads each node's control file (db.FakeClock's
// Mechanism), for the op's value; a node whose clock is not faked is
// absent.
func fakeReaders(ctx context.Context, c *Cluster, nodes []db.Node) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		if fc, _, err := fakeClockOf(ctx, c, n); err == nil {
			out[n.Name] = fc.Mechanism
		}
	}
	return out
}
