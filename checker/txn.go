package checker

import (
	"encoding/json"
	"fmt"
	"strings"

	"chaos/checker/listappend"
	"chaos/history"
)

// The list-append workload's history: each client op is a transaction,
// f "txn", whose value is a list of micro-operations, each a three-element
// array [f, key, value]: ["append", "x", 3] appends 3 to the list under x;
// ["r", "x", null] reads it, and the completion of a transaction that
// committed (ok) carries the list read: ["r", "x", [1, 2, 3]]. Invocations
// carry null in reads. A failed completion certainly did not commit; an
// info completion, or none at all (the history ended first), may have.

// ListAppendDetails are the details of the list-append check.
type ListAppendDetails struct {
	// Model is the consistency model the verdict is for.
	Model string `json:"model"`
	// Txns counts the transactions checked.
	Txns int `json:"txns"`
	// AnomalyTypes are the names of the anomalies found, forbidden by the
	// model or not, sorted.
	AnomalyTypes []string `json:"anomaly_types"`
	// Anomalies are the anomalies, each explained; at most
	// maxTxnAnomalies of them (AnomalyCount says how many were found).
	Anomalies    []TxnAnomaly `json:"anomalies"`
	AnomalyCount int          `json:"anomaly_count"`
	// Undecided names the cycle searches that gave up (the verdict is
	// then unknown unless a forbidden anomaly was found).
	Undecided []string `json:"undecided,omitempty"`
}

// TxnAnomaly is one anomaly of a list-append history.
type TxnAnomaly struct {
	// Name is its class: G0, G1a, G1b, G1c, G-single, G-nonadjacent,
	// G2-item (with -realtime or -process when the cycle needs such an
	// edge), incompatible-order, duplicate-append, duplicate-elements,
	// phantom-value, internal, fractured-append, malformed-op,
	// malformed-txn.
	Name string `json:"name"`
	// Forbidden says whether the model forbids it.
	Forbidden bool `json:"forbidden"`
	// Ops are the history indexes of the invocations of the transactions
	// involved, in cycle order for a cycle.
	Ops []int64 `json:"ops"`
	// Explanation says, in words, what was seen, a line per step: the
	// transaction invoked at history index n is Tn.
	Explanation string `json:"explanation"`
}

// maxTxnAnomalies bounds the anomalies results.json lists.
const maxTxnAnomalies = 100

// DefaultConsistencyModel is the list-append check's model unless told.
const DefaultConsistencyModel = string(listappend.StrictSerializable)

// ListAppend checks a list-append history (f "txn") under model
// (DefaultConsistencyModel when ""): Elle's inference of the keys'
// version orders and the transactions' dependencies, and a search for
// the cycles and other anomalies the model forbids (package listappend).
// Micro-operations it cannot read are malformed-op anomalies, not errors;
// the error is for a model it does not know.
func ListAppend(h history.History, model string) (Result, error) {
	if model == "" {
		model = DefaultConsistencyModel
	}
	txns := decodeTxns(h)
	res, err := listappend.Check(txns, listappend.Options{Model: listappend.Model(model)})
	if err != nil {
		return Result{}, err
	}
	d := &ListAppendDetails{Model: model, Txns: res.Txns, AnomalyTypes: res.AnomalyTypes,
		Anomalies: []TxnAnomaly{}, AnomalyCount: len(res.Anomalies), Undecided: res.Undecided}
	if d.AnomalyTypes == nil {
		d.AnomalyTypes = []string{}
	}
	for _, a := range res.Anomalies[:min(len(res.Anomalies), maxTxnAnomalies)] {
		ops := make([]int64, len(a.Txns))
		for i, t := range a.Txns {
			ops[i] = int64(t)
		}
		d.Anomalies = append(d.Anomalies, TxnAnomaly{Name: a.Name, Forbidden: listappend.Forbids(res.Model, a.Name),
			Ops: ops, Explanation: a.Explain()})
	}
	return Result{Valid: txnValidity(res.Valid), Details: d}, nil
}

// txnValidity is v as a Validity.
func txnValidity(v listappend.Verdict) Validity {
	switch v {
	case listappend.Valid:
		return Valid
	case listappend.Invalid:
		return Invalid
	}
	return Unknown
}

// decodeTxns pairs each client transaction's invocation with its
// completion (the next completion of its process) and decodes both. A
// transaction's Index is its invocation's history index (the check names
// it T<index>). An invocation left open at the end is info.
func decodeTxns(h history.History) []listappend.Txn {
	var txns []listappend.Txn
	open := map[history.Process]int{} // process -> its open txn in txns
	for i := range h {
		op := &h[i]
		if op.Process.IsNemesis() || op.F != history.FTxn {
			continue
		}
		if op.Type == history.Invoke {
			open[op.Process] = len(txns)
			txns = append(txns, listappend.Txn{Index: int(op.Index), Process: int(op.Process), Type: listappend.Info,
				Ops: decodeMicroOps(op.Value, false), Invoke: op.Time, Complete: op.Time})
			continue
		}
		t, ok := open[op.Process]
		if !ok {
			continue // a completion without its invocation: validation's to report
		}
		delete(open, op.Process)
		txns[t].Complete = op.Time
		switch op.Type {
		case history.OK:
			txns[t].Type, txns[t].Ops = listappend.OK, decodeMicroOps(op.Value, true)
		case history.Fail:
			txns[t].Type = listappend.Fail
		}
	}
	return txns
}

// decodeMicroOps reads a transaction's value. Reads are known when
// completed (an ok completion's value). What does not decode becomes a
// micro-operation whose F names the problem, which the check reports as
// malformed.
func decodeMicroOps(raw json.RawMessage, completed bool) []listappend.MicroOp {
	var mops []json.RawMessage
	if err := json.Unmarshal(raw, &mops); err != nil {
		return []listappend.MicroOp{{F: fmt.Sprintf("not a list of micro-operations: %.80s", raw)}}
	}
	out := make([]listappend.MicroOp, len(mops))
	for i, m := range mops {
		out[i] = decodeMicroOp(m, completed)
	}
	return out
}

// decodeMicroOp reads one [f, key, value] micro-operation.
func decodeMicroOp(raw json.RawMessage, completed bool) listappend.MicroOp {
	bad := listappend.MicroOp{F: fmt.Sprintf("not [f, key, value]: %.80s", raw)}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil || len(parts) != 3 {
		return bad
	}
	var m listappend.MicroOp
	if json.Unmarshal(parts[0], &m.F) != nil || json.Unmarshal(parts[1], &m.Key) != nil {
		return bad
	}
	switch m.F {
	case listappend.FAppend:
		if json.Unmarshal(parts[2], &m.Value) != nil {
			return bad
		}
	case listappend.FRead:
		if completed { // null: an empty list (a key never written)
			if json.Unmarshal(parts[2], &m.List) != nil {
				return bad
			}
			m.Known = true
		}
	}
	return m
}

// Findings says what the list-append check found: how many transactions
// under which model, each anomaly in words (forbidden ones first), and why
// a verdict is unknown.
func (d *ListAppendDetails) Findings() []string {
	lines := []string{fmt.Sprintf("%d transactions checked under %s; anomalies: %s", d.Txns, d.Model, listSomeOr(d.AnomalyTypes, 8, "none"))}
	for _, forbidden := range []bool{true, false} {
		for _, a := range d.Anomalies {
			if a.Forbidden == forbidden {
				what := "forbidden"
				if !forbidden {
					what = "allowed by " + d.Model
				}
				first, rest, _ := strings.Cut(a.Explanation, "\n")
				lines = append(lines, fmt.Sprintf("%s (%s): %s", a.Name, what, first))
				for l := range strings.SplitSeq(rest, "\n") {
					if l != "" {
						lines = append(lines, "  "+l)
					}
				}
			}
		}
	}
	if n := d.AnomalyCount - len(d.Anomalies); n > 0 {
		lines = append(lines, fmt.Sprintf("and %d more anomalies (not listed)", n))
	}
	if len(d.Undecided) > 0 {
		lines = append(lines, "the cycle search gave up on: "+listSome(d.Undecided, 5))
	}
	return lines
}

// listSomeOr is listSome, or none when items is empty.
func listSomeOr(items []string, n int, none string) string {
	if len(items) == 0 {
		return none
	}
	return listSome(items, n)
}

// ConsistencyModels are the models the list-append check knows, strongest
// first.
func ConsistencyModels() []string {
	return []string{string(listappend.StrictSerializable), string(listappend.StrongSessionSerializable),
		string(listappend.Serializable), string(listappend.SnapshotIsolation), string(listappend.ReadCommitted)}
}
