// Package eventlog owns chaos-node's protocol event log, events.jsonl
// (docs/FORMATS.md, "events.jsonl"): the [Event] type, the [Writer] a
// node appends with, and the torn-line-tolerant readers the Raft checker,
// the report and `chaos logs` read with: [ScanEvents] and [ScanRun] give
// the events one at a time, in the memory of one line, [ReadEvents] and
// [LoadRun] return them all.
//
// The format: JSON lines, one event a line, each beginning with
// {"time":" (RFC 3339 UTC, nanoseconds), then event and node, then the
// fields the event's kind carries (see the [Kind] constants). Readers rely
// on that beginning to tell a line torn by a killed node from a bad one.
package eventlog

import (
	"slices"
	"strings"
	"time"
)

// FileName is the event log's name in a node's log directory, and in
// nodes/<node>/ of a run directory.
const FileName = "events.jsonl"

// Kind is an event's name, the "event" field of a line.
type Kind string

// The kinds of events chaos-node writes, each with the fields it carries
// (written in this order, zero values included).
const (
	// KindStart: the node recovered its state and starts. Fields: term
	// and for (the hard state recovered: the term, and the candidate voted
	// for in it, NoVote for none), index (the last log index recovered: the
	// last entry's, or the snapshot's), entries (in the log), truncated
	// (bytes of a damaged WAL tail recovery cut off, 0 for none), bugs
	// (planted, comma-separated). Event logs written before for, index and
	// truncated were added have for "" (see StartKnowsState).
	KindStart    Kind = "start"
	KindStop     Kind = "stop"     // a clean shutdown; a killed node writes none
	KindRole     Kind = "role"     // role, term (the node's), leader (the one it knows, "" for none)
	KindVote     Kind = "vote"     // term, for (the candidate voted for)
	KindCommit   Kind = "commit"   // index (the new commit index)
	KindApply    Kind = "apply"    // index, term (the entry's), hash (of its command)
	KindSnapshot Kind = "snapshot" // index, term (of the snapshot's last entry)
	KindRestore  Kind = "restore"  // index, term (of the restored snapshot's last entry)
	// KindConf is a membership configuration the node applied: at start,
	// the one as of its snapshot (index 0 and the initial members when it
	// has none; none for a node that joined and has no snapshot, whose log
	// holds every configuration it knows), then one per membership change
	// it applies. Fields: index and term (of the
	// change's entry, or the snapshot's), change ("add-learner n4",
	// "promote-voter n4", "remove-node n2"; "" at start), voters and learners
	// (names, comma-separated, sorted).
	KindConf Kind = "conf"
)

// NoVote is a start event's "for" when the recovered hard state holds no
// vote. A node cannot be named so.
const NoVote = "none"

// StartKnowsState reports whether the start event e carries the recovered
// vote and last index (for and index): every start chaos-node writes now
// does; older event logs' do not.
func StartKnowsState(e Event) bool { return e.Event == KindStart && e.For != "" }

// Role is a Raft role, the "role" field of a role event.
type Role string

// The roles chaos-node's Raft takes.
const (
	Follower     Role = "follower"
	PreCandidate Role = "pre-candidate" // running a PreVote round, without changing its term
	Candidate    Role = "candidate"
	Leader       Role = "leader"
)

// Event is one line of events.jsonl. Fields its kind does not carry are
// zero. Terms and indexes are uint64, as in raft.
type Event struct {
	Time    time.Time `json:"time"`
	Node    string    `json:"node"`
	Event   Kind      `json:"event"`
	Role    Role      `json:"role,omitempty"`    // role
	Leader  string    `json:"leader,omitempty"`  // role: the leader the node knows, "" for none
	For     string    `json:"for,omitempty"`     // vote: the candidate voted for; start: the vote recovered
	Hash    string    `json:"hash,omitempty"`    // apply: hash of the entry's command
	Term    uint64    `json:"term,omitempty"`    // start, role, vote: the node's term; apply, snapshot, restore: the entry's
	Index   uint64    `json:"index,omitempty"`   // commit, apply, snapshot, restore; start: the last log index
	Entries int       `json:"entries,omitempty"` // start: entries in the log
	// Truncated is a start's bytes of damaged WAL tail cut off.
	Truncated int64 `json:"truncated,omitempty"`
	// Lost is a start's reason to believe its storage lost records it had
	// made durable (the WAL's RecoveryInfo.LostReason): the node neither
	// votes nor campaigns until a leader has caught it up. "" for none.
	Lost   string `json:"lost,omitempty"`
	Bugs   string `json:"bugs,omitempty"`   // start: the planted bugs enabled, comma-separated
	Change string `json:"change,omitempty"` // conf: the change applied ("" at start)
	// Voters and Learners are a conf event's members, names comma-separated.
	Voters   string `json:"voters,omitempty"`
	Learners string `json:"learners,omitempty"`
	// Line is the 1-based line of the file the event was read from (set by
	// the reader; not part of the format).
	Line int `json:"-"`
}

// Members returns the names of a conf event's Voters or Learners field,
// sorted (none for "").
func Members(list string) []string {
	out := strings.FieldsFunc(list, func(r rune) bool { return r == ',' })
	slices.Sort(out)
	return out
}
