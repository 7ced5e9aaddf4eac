// Package faultrec holds the fault records: the values of the nemesis ops
// in history.jsonl (docs/FORMATS.md, "Nemesis operations"), one Go type
// per family and phase, and the table of the families that readers need
// (name, op names, what a family acts on, its band's colour).
//
// It is a leaf: it imports nothing of chaos's, so that the readers of a
// history (runreport, raftcheck, storeweb) read fault records without
// importing the package that injects the faults (nemesis), and nemesis
// writes the same types.
//
// Invariants: every type marshals to exactly the bytes the nemesis wrote
// before the types existed (keys in sorted order, as encoding/json writes a
// map; a field absent when the nemesis did not set it), so stores written
// before and after read alike; Decode is the one way a reader turns an
// op's raw value into a record, and says why when it cannot.
package faultrec
