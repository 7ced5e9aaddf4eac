package listappend

import "fmt"

// opProblem says why op is malformed, or returns "" when it is well formed
// (see [MicroOp] for the contract). Every later pass skips the
// micro-operations this rejects, so they never reach the analysis.
func opProblem(op MicroOp) string {
	switch op.F {
	case FAppend:
		if op.Known || op.List != nil {
			return "an append carries a read's list"
		}
		return ""
	case FRead:
		if op.Value != 0 {
			return fmt.Sprintf("a read carries an append's value %d", op.Value)
		}
		if !op.Known && op.List != nil {
			return "a read whose result is unknown carries a list"
		}
		return ""
	default:
		return fmt.Sprintf("unknown function %q", op.F)
	}
}

// outcome returns t's outcome, Info when its Type is none of OK, Fail or
// Info: a transaction we cannot classify may or may not have committed.
func outcome(t *Txn) Outcome {
	switch t.Type {
	case OK, Fail, Info:
		return t.Type
	default:
		return Info
	}
}

// completes reports whether t has a completion time realtime order may
// use: it committed and did not complete before it was invoked.
func completes(t *Txn) bool {
	return t.Type == OK && t.Complete >= t.Invoke
}

// validate reports malformed transactions and micro-operations.
func (r *run) validate() {
	for i := range r.h {
		t := &r.h[i]
		switch {
		case outcome(t) != t.Type:
			r.report(Anomaly{Name: MalformedTxn, Txns: []int{t.Index},
				Detail: fmt.Sprintf("T%d has type %d, which is none of ok, fail and info; it is treated as info.", t.Index, t.Type)})
		case t.Type != Info && t.Complete < t.Invoke:
			r.report(Anomaly{Name: MalformedTxn, Txns: []int{t.Index},
				Detail: fmt.Sprintf("T%d completed at %d, before it was invoked at %d; it takes no part in realtime order.", t.Index, t.Complete, t.Invoke)})
		}
		for j, op := range t.Ops {
			if p := opProblem(op); p != "" {
				r.report(Anomaly{Name: MalformedOp, Txns: []int{t.Index}, Key: op.Key,
					Detail: fmt.Sprintf("T%d's micro-operation %d is malformed (%s) and was ignored.", t.Index, j, p)})
			}
		}
	}
}
