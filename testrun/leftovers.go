package testrun

import (
	"context"
	"fmt"
	"strings"

	"chaos/history/faultrec"
	"chaos/nemesis"
)

// healLeftovers removes, before the nodes are deployed, what an earlier
// run whose controller was killed may have left on the hosts (see
// nemesis.HealLeftovers), says on Out what it found, and keeps the heal op
// for the history, which does not exist yet (see recordLeftovers). A host
// that cannot be checked or healed fails the setup: a run on top of an
// earlier run's faults would judge the system by them.
func (r *run) healLeftovers(ctx context.Context) error {
	op, err := nemesis.HealLeftovers(ctx, r.nemesisCluster(), r.cl.Local)
	if op.F != "" {
		r.leftovers = op
		r.log.Warn("setup: removed what an earlier run left", "value", op.Value)
		fmt.Fprintf(r.env.Out, "setup: removed what an earlier run left on the hosts: %s\n", r.describeLeftovers(op))
	}
	if err != nil {
		return fmt.Errorf("removing what an earlier run left on the hosts (see chaos heal): %w", err)
	}
	return nil
}

// describeLeftovers is op's value in one line, node by node in order.
func (r *run) describeLeftovers(op nemesis.Op) string {
	v, _ := op.Value.(faultrec.Heal)
	var parts []string
	for _, n := range r.cl.Nodes {
		if what := v.Leftovers[n.Name]; len(what) > 0 {
			parts = append(parts, n.Name+": "+strings.Join(what, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// recordLeftovers records the setup's heal op, if it found anything, as
// the first line of the history: it happened before the load, whose clock
// starts with the history.
func (r *run) recordLeftovers() {
	if r.leftovers.F == "" {
		return
	}
	if err := r.rec.Nemesis(r.leftovers.F, r.leftovers.Value); err != nil {
		r.log.Error("recording the setup's heal", "err", err)
	}
}
