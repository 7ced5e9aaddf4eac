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
	workload := opts.Workload
	if workload == "" {
		var err error
		if workload, err = DetectWorkload(h); err != nil {
			return Report{}, err
		}
	}
	r := Report{Ops: OpCounts(h), Checks: map[string]Result{"stats": Stats(h)}}
	switch workload {
	case WorkloadRegister:
		res, err := Linearizable(ctx, h, opts.Linearizable)
		if err != nil {
			return Report{}, fmt.Errorf("linearizable: %w", err)
		}
		r.Checks["linearizable"] = res
	case WorkloadSet:
		res, err := Set(h)
		if err != nil {
			return Report{}, fmt.Errorf("set: %w", err)
		}
		r.Checks["set"] = res
	default:
		return Report{}, fmt.Errorf("unknown workload %q (want %s or %s)", workload, WorkloadRegister, WorkloadSet)
	}
	verdicts := make([]Validity, 0, len(r.Checks))
	for _, c := range r.Checks {
		verdicts = append(verdicts, c.Valid)
	}
	r.Valid = Merge(verdicts...)
	return r, nil
}

// DetectWorkload tells the workload from the client ops' f values: write
// or cas mean the register, add means the set, and a history of reads alone
// is a register's. Mixing both, or an f neither knows, is an error wrapping
// ErrMalformed.
func DetectWorkload(h history.History) (string, error) {
	var register, set *history.Op
	for i := range h {
		op := &h[i]
		if op.Process.IsNemesis() || op.Type != history.Invoke {
			continue
		}
		switch op.F {
		case history.FRead:
		case history.FWrite, history.FCAS:
			register = op
		case history.FAdd:
			set = op
		default:
			return "", fmt.Errorf("%w: op %d: f %q belongs to no workload (register: read, write, cas; set: add, read)",
				ErrMalformed, op.Index, op.F)
		}
		if register != nil && set != nil {
			return "", fmt.Errorf("%w: the history mixes workloads: op %d is a register %q, op %d a set %q",
				ErrMalformed, register.Index, register.F, set.Index, set.F)
		}
	}
	if set != nil {
		return WorkloadSet, nil
	}
	return WorkloadRegister, nil
}
