package raftcheck

import "chaos/node/eventlog"

// KindCameBackWithLess: a node restarted with less durable state than it
// had shown to others before: without the vote it had cast in the term it
// restarted in, or with a log shorter than an index it had applied (or
// snapshotted, or recovered at an earlier start). A lower term is
// KindTermDecreased.
const KindCameBackWithLess = "came-back-with-less"

// durableState is what a node's events show it had made durable, over
// its earlier lives and its current one: chaos-node writes a vote event
// after the vote is persisted, applies an entry only once every entry up
// to it is in its durable log, records a snapshot or restore after the
// snapshot file is durable, and a start event after recovery has fsynced
// what it read. Commit events are not evidence: a commit index is written
// without an fsync of its own.
type durableState struct {
	voteTerm uint64 // the highest term the node voted in
	voteFor  string // its vote in voteTerm
	index    uint64 // the highest log index the node had durable
}

// observe takes what e shows durable.
func (d *durableState) observe(e eventlog.Event) {
	switch {
	case e.Event == eventlog.KindVote && (e.Term > d.voteTerm || d.voteFor == ""):
		d.voteTerm, d.voteFor = e.Term, e.For
	case e.Event == eventlog.KindApply, e.Event == eventlog.KindSnapshot, e.Event == eventlog.KindRestore,
		eventlog.StartKnowsState(e):
		d.index = max(d.index, e.Index)
	}
}

// check reports how the start event e came back with less than d, before
// e itself is observed. Starts of event logs that do not carry the
// recovered state (eventlog.StartKnowsState) are not judged.
func (d *durableState) check(e eventlog.Event) []Violation {
	if !eventlog.StartKnowsState(e) {
		return nil
	}
	var out []Violation
	if d.voteFor != "" && e.Term == d.voteTerm && e.For != d.voteFor {
		out = append(out, violation(KindCameBackWithLess, e,
			"%s restarted in term %d with vote %s, after voting for %s in that term", e.Node, e.Term, e.For, d.voteFor))
	}
	if e.Index < d.index {
		out = append(out, violation(KindCameBackWithLess, e,
			"%s restarted with its log ending at index %d, after it had index %d durable (applied, snapshotted or recovered)",
			e.Node, e.Index, d.index))
	}
	return out
}
