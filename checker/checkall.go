package checker

import (
	"context"
	"fmt"

	"chaos/history"
)

// Workloads CheckAll knows.
const (
	WorkloadRegister = "register"
	WorkloadSet      = "set"
)

// Options configure CheckAll.
type Options struct {
	// Workload is WorkloadRegister, WorkloadSet, or "" to detect it from
	// the ops' f values.
	Workload     string
	Linearizable LinearizableOptions
}

// Report is the part of results.json the checkers own.
type Report struct {
	Valid  Validity          `json:"valid"` // every check merged
	Ops    Counts            `json:"ops"`
	Checks map[string]Result `json:"checks"`
}

// CheckAll runs every checker that fits the workload: linearizable and
// stats for the register, set and stats for the set. Errors are about the
// input (wrapping ErrMalformed) or about writing visualizations.
func CheckAll(ctx context.Context, h history.History, opts Options) (Report, error) {
	c := NewChecks(opts)
	for i := range h {
		if err := c.Add(&h[i]); err != nil {
			return Report{}, err
		}
	}
	return c.Report(ctx)
}

// DetectWorkload tells the workload from the client ops' f values: write
// or cas mean the register, add means the set, and a history of reads alone
// is a register's. Mixing both, or an f neither knows, is an error wrapping
// ErrMalformed.
func DetectWorkload(h history.History) (string, error) {
	var d workloadDetector
	for i := range h {
		if err := d.add(&h[i]); err != nil {
			return "", err
		}
	}
	if d.decided() == WorkloadSet {
		return WorkloadSet, nil
	}
	return WorkloadRegister, nil
}

// workloadDetector is DetectWorkload over ops as they arrive.
type workloadDetector struct {
	register, set     history.Op // the last op seen of each workload
	isRegister, isSet bool       // whether one was seen
}

func (d *workloadDetector) add(op *history.Op) error {
	if op.Process.IsNemesis() || op.Type != history.Invoke {
		return nil
	}
	switch op.F {
	case history.FRead:
	case history.FWrite, history.FCAS:
		d.register, d.isRegister = *op, true
	case history.FAdd:
		d.set, d.isSet = *op, true
	default:
		return fmt.Errorf("%w: op %d: f %q belongs to no workload (register: read, write, cas; set: add, read)",
			ErrMalformed, op.Index, op.F)
	}
	if d.isRegister && d.isSet {
		return fmt.Errorf("%w: the history mixes workloads: op %d is a register %q, op %d a set %q",
			ErrMalformed, d.register.Index, d.register.F, d.set.Index, d.set.F)
	}
	return nil
}

// decided is the workload the ops so far show, or "" while they are reads.
func (d *workloadDetector) decided() string {
	switch {
	case d.isRegister:
		return WorkloadRegister
	case d.isSet:
		return WorkloadSet
	}
	return ""
}
