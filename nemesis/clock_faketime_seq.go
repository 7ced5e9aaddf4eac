package nemesis

import (
	"context"
	"errors"
	"fmt"
)

// The targeted faults' fake clocks (the lease family under the faketime
// strategy): the sequence remembers which nodes' control files it
// changed, and its undo resets them.

// setFakeRate makes node's fake clock run at rate times true time, and
// reports the rate its control file holds.
func (s *sequence) setFakeRate(ctx context.Context, c *Cluster, node string, rate float64) (float64, error) {
	n, err := nodeByName(c, node)
	if err != nil {
		return 0, err
	}
	s.fakes = append(s.fakes, node)
	return fakeRate(ctx, c, n, rate)
}

// resetFakeClocks puts the true clock back in the control files of nodes
// (those without one are left alone).
func resetFakeClocks(ctx context.Context, c *Cluster, nodes []string) error {
	var errs []error
	for _, name := range nodes {
		n, err := nodeByName(c, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := fakeReset(ctx, c, n); err != nil {
			errs = append(errs, fmt.Errorf("fake clock: %w", err))
		}
	}
	return errors.Join(errs...)
}
