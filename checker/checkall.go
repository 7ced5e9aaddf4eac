package checker

import (
	"context"
	"fmt"

	"chaos/history"
)

// Workloads CheckAll knows.
const (
	WorkloadRegister   = "register"
	WorkloadSet        = "set"
	WorkloadListAppend = "list-append"
)

// Options configure CheckAll.
type Options struct {
	// Workload is WorkloadRegister, WorkloadSet, WorkloadListAppend, or ""
	// to detect it from the ops' f values.
	Workload     string
	Linearizable LinearizableOptions
	// ConsistencyModel is the list-append check's model (see ListAppend;
	// "" is DefaultConsistencyModel).
	ConsistencyModel string
}

// Report is the part of results.json the checkers own.
type Report struct {
	Valid  Validity          `json:"valid"` // every check merged
	Ops    Counts            `json:"ops"`
	Checks map[string]Result `json:"checks"`
}

// CheckAll runs every checker that fits the workload: linearizable and
// stats for the register, set and stats for the set, list-append and
// stats for list-append. Errors are about the input (wrapping
// ErrMalformed) or about writing visualizations.
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
// or cas mean the register, add means the set, txn means list-append, and
// a history of reads alone is a register's. Mixing them, or an f none
// knows, is an error wrapping ErrMalformed.
func DetectWorkload(h history.History) (string, error) {
	var d workloadDetector
	for i := range h {
		if err := d.add(&h[i]); err != nil {
			return "", err
		}
	}
	if w := d.decided(); w != "" {
		return w, nil
	}
	return WorkloadRegister, nil
}

// workloadDetector is DetectWorkload over ops as they arrive.
type workloadDetector struct {
	first    history.Op // the first op that told the workload
	workload string     // "" while only reads were seen
}

func (d *workloadDetector) add(op *history.Op) error {
	if op.Process.IsNemesis() || op.Type != history.Invoke {
		return nil
	}
	var w string
	switch op.F {
	case history.FRead:
		return nil
	case history.FWrite, history.FCAS:
		w = WorkloadRegister
	case history.FAdd:
		w = WorkloadSet
	case history.FTxn:
		w = WorkloadListAppend
	default:
		return fmt.Errorf("%w: op %d: f %q belongs to no workload (register: read, write, cas; set: add, read; list-append: txn)",
			ErrMalformed, op.Index, op.F)
	}
	switch d.workload {
	case "":
		d.first, d.workload = *op, w
	case w:
	default:
		return fmt.Errorf("%w: the history mixes workloads: op %d is a %s %q, op %d a %s %q",
			ErrMalformed, d.first.Index, d.workload, d.first.F, op.Index, w, op.F)
	}
	return nil
}

// decided is the workload the ops so far show, or "" while they are reads.
func (d *workloadDetector) decided() string { return d.workload }
