package raftcheck

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"chaos/checker"
	"chaos/eventlog"
	"chaos/foreignlog"
)

// Violation kinds reported by [Raft].
const (
	KindElectionSafety     = "election-safety"      // two nodes leader in one term
	KindTermDecreased      = "term-decreased"       // a node's term went down
	KindDoubleVote         = "double-vote"          // a node voted for two candidates in one term
	KindStateMachineSafety = "state-machine-safety" // two applies of one index differ in hash or term
	KindCommitDecreased    = "commit-decreased"     // a node's commit index went down within one life
	// KindConfDisagreement: two nodes applied different membership
	// configurations at one log index.
	KindConfDisagreement = "conf-disagreement"
	// KindLeaderWithoutMajority: a node became leader without the votes
	// of a majority of the voters of the configuration it was elected in.
	KindLeaderWithoutMajority = "leader-without-majority"
)

// MaxViolations bounds the violations [Raft] lists; Counts still counts
// them all. A diverged log breaks State Machine Safety at every index
// after the divergence, and the first ones are the ones worth reading.
const MaxViolations = 100

// Violation is one broken invariant, at the event that showed it.
type Violation struct {
	Kind  string    `json:"kind"`
	Node  string    `json:"node"`
	Term  uint64    `json:"term,omitempty"`
	Index uint64    `json:"index,omitempty"`
	Time  time.Time `json:"time"`
	Line  int       `json:"line,omitempty"` // in the node's events.jsonl
	Text  string    `json:"text"`
}

// RaftDetails is what [Raft] reports beside its verdict.
type RaftDetails struct {
	Events     int               `json:"events"`
	Nodes      []string          `json:"nodes"`
	Leaders    map[uint64]string `json:"leaders"` // term -> the first node that became leader in it
	Counts     map[string]int    `json:"counts"`  // violations by kind, all of them
	Violations []Violation       `json:"violations"`
	Omitted    int               `json:"omitted,omitempty"` // violations beyond MaxViolations, not listed
	Reason     string            `json:"reason,omitempty"`  // why the verdict is unknown
	Skipped    []string          `json:"skipped,omitempty"` // event-log lines left out, and why (torn lines of killed lives)
	// Damaged lists the nodes that came back with less after cutting a
	// damaged WAL tail off (KindLostToDamage): not violations.
	Damaged []Violation `json:"damaged,omitempty"`
	// Membership is what the conf events say; nil when there are none
	// (older event logs), and the checks are then those without it.
	Membership *MembershipDetails `json:"membership,omitempty"`
}

// Raft checks Raft's safety invariants over the events of a run (all
// nodes, as [eventlog.LoadRun] returns them):
//
//   - Election Safety: at most one node becomes leader in a term.
//   - A node's term never decreases: within a life (between two start
//     events) on any event carrying the node's term (start, role, vote), and
//     across restarts, since the term is persisted. A role event that is
//     the last event of a killed life is left out of the cross-restart
//     comparison: it is emitted before its term is persisted, so a kill in
//     between legitimately loses it.
//   - A node votes for at most one candidate per term, across restarts.
//   - A node never comes back from a restart with less than it had shown
//     durable: the vote it cast in the term it restarts in, or a log
//     reaching an index it had applied, snapshotted or recovered
//     (KindCameBackWithLess, lesser.go; starts of older event logs that do
//     not carry the recovered vote and index are not judged).
//   - State Machine Safety: every apply of an index, on any node and in any
//     life, has the same entry term and command hash.
//   - A node's commit index never decreases within a life.
//
// With conf events (the membership configurations nodes apply, see
// membership.go), also:
//
//   - All nodes agree on the configuration at each log index: two that
//     applied different ones there break it (see disagreements).
//   - A leader had the votes of a majority of the voters of the
//     configuration it was elected in, votes of other nodes (a removed
//     node, a learner) not counted; judged where the events decide it
//     (see membership.quorums). Election Safety is checked as above: one
//     leader per term holds across configurations too.
//   - Votes cast by nodes that were a voter of no configuration that could
//     be in force are listed (MembershipDetails.NonVoterVotes), not
//     counted as violations: any node may answer a vote request.
//   - A name can be borne by several members in turn (a removed node added
//     back as a new member): a life that starts with nothing on disk (term
//     0, no entries) and without the initial members' configuration (no
//     conf event at index 0, as a node that joins writes none) begins a new
//     member, and the per-node checks (terms, votes, commit indexes)
//     start afresh there.
//
// Per-node checks follow each node's file order (Event.Line, ties in
// slice order), not wall time, which clock faults skew. Violations are
// sorted by time. Without any event the verdict is unknown; with a
// violation it is invalid; otherwise valid. [CheckRun] checks the same
// on a run directory's logs without holding them (read.go).
func Raft(events []eventlog.Event) checker.Result {
	r, _ := readEvents(sliceSource(events)) // a slice gives no error
	return r.raft(analyze(r.events))
}

// raft is [Raft] over the events read, f their analysis.
func (r *runEvents) raft(f foreignlog.Facts) checker.Result {
	d := &RaftDetails{Events: r.count, Nodes: []string{}, Leaders: map[uint64]string{},
		Counts: map[string]int{}, Violations: []Violation{}, Skipped: r.skipped}
	if r.count == 0 {
		d.Reason = "no events"
		return checker.Result{Valid: checker.Unknown, Details: d}
	}
	var all []Violation
	byNode := groupByNode(r.events)
	m := newMembership(r.events, byNode)
	for _, node := range sortedKeys(byNode) {
		d.Nodes = append(d.Nodes, node)
		for _, member := range members(byNode[node], m != nil) {
			all = append(all, checkNode(member)...)
		}
	}
	all = append(all, r.commits...)
	all, d.Damaged = splitDamaged(all)
	all = append(all, electionSafety(f, d.Leaders)...)
	all = append(all, r.stateMachine...)
	if m != nil {
		var found []Violation
		found, d.Membership = m.check(r.events, byNode, f, r.firstApplied)
		all = append(all, found...)
	}
	slices.SortStableFunc(all, func(a, b Violation) int { return a.Time.Compare(b.Time) })
	for _, v := range all {
		d.Counts[v.Kind]++
	}
	if len(all) > MaxViolations {
		d.Omitted = len(all) - MaxViolations
		all = all[:MaxViolations]
	}
	d.Violations = append(d.Violations, all...)
	if len(all) > 0 {
		return checker.Result{Valid: checker.Invalid, Details: d}
	}
	return checker.Result{Valid: checker.Valid, Details: d}
}

// groupByNode splits events by node, each node's in file order.
func groupByNode(events []eventlog.Event) map[string][]eventlog.Event {
	m := map[string][]eventlog.Event{}
	for _, e := range events {
		m[e.Node] = append(m[e.Node], e)
	}
	for _, evs := range m {
		slices.SortStableFunc(evs, func(a, b eventlog.Event) int { return cmp.Compare(a.Line, b.Line) })
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// carriesNodeTerm reports whether e's Term is the node's current term (as
// opposed to an entry's term).
func carriesNodeTerm(e eventlog.Event) bool {
	return e.Event == eventlog.KindStart || e.Event == eventlog.KindRole || e.Event == eventlog.KindVote
}

func violation(kind string, e eventlog.Event, format string, args ...any) Violation {
	return Violation{Kind: kind, Node: e.Node, Term: e.Term, Index: e.Index, Time: e.Time, Line: e.Line,
		Text: fmt.Sprintf(format, args...)}
}

// checkNode checks one member's events, in file order: terms, votes and
// what it came back with. Its commit indexes are checked as they are read
// (see read.go): evs need hold only the events read.go keeps.
func checkNode(evs []eventlog.Event) []Violation {
	var (
		out      []Violation
		votes    = map[uint64]eventlog.Event{} // term -> first vote
		durable  uint64                        // highest term known persisted by earlier lives
		lifeTerm uint64                        // highest node term in this life
		life     []eventlog.Event              // events of the current life
		kept     durableState                  // what the node showed durable so far
	)
	endLife := func() {
		n := len(life)
		if n > 0 && life[n-1].Event == eventlog.KindRole {
			n-- // killed right after a role change: its term may never have been persisted
		}
		for _, e := range life[:n] {
			if carriesNodeTerm(e) {
				durable = max(durable, e.Term)
			}
		}
		life, lifeTerm = life[:0], 0
	}
	for _, e := range evs {
		if e.Event == eventlog.KindStart {
			endLife()
			if e.Term < durable {
				kind := KindTermDecreased
				if damagedStart(e) {
					kind = KindLostToDamage // the term was in the damaged tail: the fault's (see lesser.go)
				}
				out = append(out, violation(kind, e,
					"%s restarted with term %d after reaching term %d in an earlier life", e.Node, e.Term, durable))
			}
			out = append(out, kept.check(e)...)
			if damagedStart(e) && eventlog.StartKnowsState(e) {
				durable = e.Term // what the damage took is reported once, here
				kept.restartFrom(e)
			}
		}
		kept.observe(e)
		life = append(life, e)
		if carriesNodeTerm(e) {
			if e.Term < lifeTerm {
				out = append(out, violation(KindTermDecreased, e,
					"%s event %s has term %d after term %d", e.Node, e.Event, e.Term, lifeTerm))
			}
			lifeTerm = max(lifeTerm, e.Term)
		}
		if e.Event == eventlog.KindVote {
			if first, ok := votes[e.Term]; !ok {
				votes[e.Term] = e
			} else if first.For != e.For {
				out = append(out, violation(KindDoubleVote, e,
					"%s voted for %s in term %d after voting for %s (line %d)", e.Node, e.For, e.Term, first.For, first.Line))
			}
		}
	}
	return out
}

// electionSafety reports every node that became leader of a term another
// node had led first, at its first role event saying so, and fills leaders
// with each term's first leader. Which terms had two leaders is
// foreignlog's analysis of the events, f ([foreignlog.Facts]
// TwoLeaderTerms); its tenures, in time order, are the evidence.
func electionSafety(f foreignlog.Facts, leaders map[uint64]string) []Violation {
	byTerm := map[int][]foreignlog.Tenure{}
	for _, t := range f.Leaders {
		if _, ok := leaders[uint64(t.Term)]; !ok {
			leaders[uint64(t.Term)] = t.Node
		}
		byTerm[t.Term] = append(byTerm[t.Term], t)
	}
	var out []Violation
	for _, term := range f.TwoLeaderTerms {
		first := byTerm[term][0].Node
		reported := map[string]bool{first: true}
		for _, t := range byTerm[term] {
			if reported[t.Node] {
				continue
			}
			reported[t.Node] = true
			out = append(out, Violation{Kind: KindElectionSafety, Node: t.Node, Term: uint64(term),
				Time: f.Start.Add(t.Start), Line: t.Line,
				Text: fmt.Sprintf("%s became leader in term %d, which %s already led", t.Node, term, first)})
		}
	}
	return out
}

// members splits one name's events (file order) into the members that
// bore it in turn: when the run has conf events (confs), a life that
// starts with nothing on disk and without the initial members'
// configuration begins a new one (see [Raft]). Without conf events the
// name is one member, as before membership changes.
func members(evs []eventlog.Event, confs bool) [][]eventlog.Event {
	if !confs {
		return [][]eventlog.Event{evs}
	}
	var out [][]eventlog.Event
	begin := 0
	for i := range evs {
		if i > begin && freshJoin(evs[i:]) {
			out = append(out, evs[begin:i])
			begin = i
		}
	}
	return append(out, evs[begin:])
}

// freshJoin reports whether life, a node's events from one of them on,
// begins with a start of a node with nothing on disk (term 0, no entries)
// that writes no conf event at index 0 before its next start: a node
// that joined a running cluster.
func freshJoin(life []eventlog.Event) bool {
	if s := life[0]; s.Event != eventlog.KindStart || s.Term != 0 || s.Entries != 0 {
		return false
	}
	for _, e := range life[1:] {
		if e.Event == eventlog.KindStart {
			break
		}
		if e.Event == eventlog.KindConf && e.Index == 0 {
			return false
		}
	}
	return true
}
