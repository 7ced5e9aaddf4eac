// Package raftcheck checks a run from the inside: the chaos-node event logs
// (nodes/<node>/events.jsonl, see docs/FORMATS.md) for Raft's safety
// invariants, and the event logs together with the client history for
// availability and recovery after faults.
//
//   - [Raft]: Election Safety, terms never decreasing on a node, at most one
//     vote per term and node (across restarts), no node coming back from a
//     restart with less than it had shown durable (its vote, its log), State
//     Machine Safety, and commit indexes never decreasing within a node's
//     life; with conf
//     events, the membership over time: nodes agreeing on the
//     configuration at each index, leaders elected by a majority of their
//     configuration's voters, and the votes of non-voters (membership.go).
//   - [Availability]: leaderless windows, client-visible unavailability
//     windows, recovery time after each heal, whether the cluster
//     recovered after the final heal, and two liveness rules: election
//     livelock ([LivelockRule]) and a cluster without a leader while a
//     majority was up and connected ([StuckRule]).
//
// Both return a [checker.Result] in the shape results.json stores, and say
// valid only when they could decide. [CheckRun] runs both on a run
// directory, reading its event logs once, a line at a time, and keeping
// only what the rules need of them (read.go), whatever their length.
package raftcheck
