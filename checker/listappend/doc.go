// Package listappend checks list-append transactional histories for
// isolation anomalies, in the manner of Elle (Kingsbury and Alvaro,
// "Elle: Inferring Isolation Anomalies from Experimental Observations",
// VLDB 2020).
//
// A history is a slice of completed transactions ([Txn]), each a list of
// micro-operations ([MicroOp]) that append a value to a list stored under a
// key, or read the whole list. Because a list remembers the order of every
// append it received, one read of it reveals the version order of its key
// up to that point; this is what makes list-append histories checkable in
// linear time, where a register history would need a search.
//
// [Check] works in four passes, each over the whole history:
//
//  1. Validation (validate.go): malformed micro-operations and transactions
//     are reported and left out, so bad input is an anomaly, never a panic.
//  2. Writes (writes.go): who appended each value; a value appended twice to
//     one key is a duplicate-append anomaly.
//  3. Versions (versions.go, fractured.go, internal.go): each key's version order is its
//     longest committed read, and every other read must be a prefix of it.
//     Anomalies visible without a cycle (aborted, intermediate, phantom and
//     duplicated values, inconsistency inside one transaction) are found
//     here.
//  4. Dependencies and cycles (deps.go, realtime.go, graph.go, scc.go,
//     cycles.go, paths.go): a dependency graph of ww, wr and rw edges (plus
//     realtime and process edges when the model asks), split into strongly
//     connected components; in each, the most severe cycle class is searched
//     first, with a bounded search.
//
// The verdict is three-valued: [Valid] only when every search decided,
// [Invalid] when an anomaly the chosen [Model] forbids was found, [Unknown]
// otherwise. What the inference cannot see: versions nobody read. A value
// that no read shows has no place in its key's version order, so cycles
// that need it are not found; the checker is sound (every anomaly it
// reports is real) but not complete for such histories.
//
// [Generate] and [Plant] build valid histories and plant known anomalies in
// them, for benchmarks and tests.
package listappend
