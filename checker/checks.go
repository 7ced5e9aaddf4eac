package checker

import (
	"context"
	"fmt"

	"chaos/history"
)

// Checks runs CheckAll's checks on a history whose ops arrive one at a
// time, in order, so that a long history need not be held whole: the
// register workload keeps only each operation's decoded form (see
// registerBuilder), the set workload keeps its ops. Add every op, then
// call Report once.
type Checks struct {
	opts     Options
	workload string // "" until an op or opts decide it
	detect   workloadDetector
	early    history.History // ops added before the workload was decided
	stats    statsBuilder
	register registerBuilder
	set      history.History
	txns     history.History
}

// NewChecks returns checks configured as CheckAll's are by opts.
func NewChecks(opts Options) *Checks {
	return &Checks{opts: opts, workload: opts.Workload}
}

// Add takes the next op of the history. An error (wrapping ErrMalformed)
// means the ops do not fit the workload; the checks are then over.
func (c *Checks) Add(op *history.Op) error {
	c.stats.add(op)
	if c.opts.Workload == "" {
		if err := c.detect.add(op); err != nil {
			return err
		}
		if c.workload == "" {
			if c.workload = c.detect.decided(); c.workload == "" {
				c.early = append(c.early, *op)
				return nil
			}
			if err := c.replayEarly(); err != nil {
				return err
			}
		}
	}
	return c.feed(op)
}

// replayEarly feeds the ops held while the workload was undecided.
func (c *Checks) replayEarly() error {
	early := c.early
	c.early = nil
	for i := range early {
		if err := c.feed(&early[i]); err != nil {
			return err
		}
	}
	return nil
}

// feed hands op to the checker of the workload.
func (c *Checks) feed(op *history.Op) error {
	switch c.workload {
	case WorkloadRegister:
		if err := c.register.add(op); err != nil {
			return fmt.Errorf("linearizable: %w", err)
		}
	case WorkloadSet:
		c.set = append(c.set, *op)
	case WorkloadListAppend:
		if !op.Process.IsNemesis() && op.F != history.FTxn {
			return fmt.Errorf("list-append: %w: op %d: f %q is not a list-append operation (txn)", ErrMalformed, op.Index, op.F)
		}
		c.txns = append(c.txns, *op)
	}
	return nil
}

// Report runs the checks that need the whole history (the linearizability
// search, the set's comparison) and returns every verdict. Errors are
// CheckAll's.
func (c *Checks) Report(ctx context.Context) (Report, error) {
	if c.workload == "" {
		c.workload = WorkloadRegister // reads alone
		if err := c.replayEarly(); err != nil {
			return Report{}, err
		}
	}
	stats := c.stats.result()
	r := Report{Ops: stats.Details.(*StatsDetails).Counts, Checks: map[string]Result{"stats": stats}}
	switch c.workload {
	case WorkloadRegister:
		rh, err := c.register.finish()
		if err != nil {
			return Report{}, fmt.Errorf("linearizable: %w", err)
		}
		res, err := linearizable(ctx, rh, c.opts.Linearizable)
		if err != nil {
			return Report{}, fmt.Errorf("linearizable: %w", err)
		}
		r.Checks["linearizable"] = res
	case WorkloadSet:
		res, err := Set(c.set)
		if err != nil {
			return Report{}, fmt.Errorf("set: %w", err)
		}
		r.Checks["set"] = res
	case WorkloadListAppend:
		res, err := ListAppend(c.txns, c.opts.ConsistencyModel)
		if err != nil {
			return Report{}, fmt.Errorf("list-append: %w", err)
		}
		r.Checks["list-append"] = res
	default:
		return Report{}, fmt.Errorf("unknown workload %q (want %s, %s or %s)", c.workload, WorkloadRegister, WorkloadSet, WorkloadListAppend)
	}
	verdicts := make([]Validity, 0, len(r.Checks))
	for _, res := range r.Checks {
		verdicts = append(verdicts, res.Valid)
	}
	r.Valid = Merge(verdicts...)
	return r, nil
}
