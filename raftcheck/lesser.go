package raftcheck

import "chaos/eventlog"

// KindCameBackWithLess: a node restarted with less durable state than it
// had shown to others before: without the vote it had cast in the term it
// restarted in, or with a log shorter than an index it had applied (or
// snapshotted, or recovered at an earlier start). A lower term is
// KindTermDecreased.
const KindCameBackWithLess = "came-back-with-less"

// KindLostToDamage is came-back-with-less at a start that cut a damaged
// tail off the node's WAL (the start event's truncated): a fault damaged
// records the node had made durable, and the node, which cannot tell such
// damage from a torn write, truncated them as one. It is listed
// (RaftDetails.Damaged), not counted as a violation: the loss is the
// fault's; what the node does with its lesser state afterwards is judged
// by the other rules and the client checks.
const KindLostToDamage = "lost-to-damage"

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
// e itself is observed: KindCameBackWithLess, or KindLostToDamage when
// the start cut a damaged WAL tail off. Starts of event logs that do not carry the
// recovered state (eventlog.StartKnowsState) are not judged.
func (d *durableState) check(e eventlog.Event) []Violation {
	if !eventlog.StartKnowsState(e) {
		return nil
	}
	kind := KindCameBackWithLess
	if damagedStart(e) {
		kind = KindLostToDamage
	}
	var out []Violation
	if d.voteFor != "" && e.Term == d.voteTerm && e.For != d.voteFor {
		out = append(out, violation(kind, e,
			"%s restarted in term %d with vote %s, after voting for %s in that term", e.Node, e.Term, e.For, d.voteFor))
	}
	if e.Index < d.index {
		out = append(out, violation(kind, e,
			"%s restarted with its log ending at index %d, after it had index %d durable (applied, snapshotted or recovered)",
			e.Node, e.Index, d.index))
	}
	return out
}

// damagedStart reports whether the start event e cut a damaged tail off
// the node's WAL (see KindLostToDamage).
func damagedStart(e eventlog.Event) bool { return e.Truncated > 0 || e.Lost != "" }

// restartFrom makes the state the damaged start e recovered what the node
// has durable: what the damage took is the fault's, reported once at e,
// and the node's later lives are judged against what it came back with
// and what it shows after, not against its lives before the damage.
func (d *durableState) restartFrom(e eventlog.Event) {
	d.voteTerm, d.voteFor, d.index = e.Term, e.For, e.Index
	if e.For == eventlog.NoVote {
		d.voteFor = ""
	}
}

// splitDamaged moves the KindLostToDamage findings out of vs.
func splitDamaged(vs []Violation) (violations, damaged []Violation) {
	for _, v := range vs {
		if v.Kind == KindLostToDamage {
			damaged = append(damaged, v)
		} else {
			violations = append(violations, v)
		}
	}
	return violations, damaged
}
