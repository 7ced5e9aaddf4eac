// Package checker decides whether a recorded history is correct, offline.
//
// Each checker reads a [history.History] and returns a [Result]: a verdict
// that is true, false or "unknown", plus checker-specific details, in the
// shape results.json stores it. A checker says valid only when it decided;
// when it could not (a search timed out, the history lacks what it needs) it
// says unknown, never true.
//
//   - [Linearizable]: the register workload against a key-value register
//     model, partitioned by key and searched with porcupine.
//   - [Set]: the set workload: lost, unexpected and recovered elements.
//   - [Stats]: outcome counts, and whether every kind of operation ever
//     succeeded.
//
// [CheckAll] runs the checkers that fit a workload and builds the
// results.json report.
package checker
