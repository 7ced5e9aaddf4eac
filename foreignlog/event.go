// Package foreignlog reads the logs of other Raft implementations (the
// formats of testdata/seeds: course labs, eliben/raft, etcd, ...) and
// chaos-node's own event log (through package eventlog), turns them into a
// common stream of events and derives the facts a person looks for when
// reading them: who led which term and when, how long the cluster had no
// leader, how fast terms churned, when nodes crashed and came back, and
// whether any term ever had two leaders. Its analysis ([Analyze]) is the one
// place those leadership facts are computed: raftcheck uses it too.
package foreignlog

import "time"

// Kind is what happened in an Event.
type Kind string

// The kinds of events the parsers produce.
const (
	KindRole       Kind = "role"       // the node took Role in Term
	KindVote       Kind = "vote"       // the node voted For a candidate in Term
	KindStart      Kind = "start"      // the node (re)started
	KindStop       Kind = "stop"       // the node stopped cleanly (or was shut down)
	KindCrash      Kind = "crash"      // the node crashed or was killed
	KindDisconnect Kind = "disconnect" // the node was cut off from the network
	KindReconnect  Kind = "reconnect"  // the node was connected again
	KindCommit     Kind = "commit"     // the node's commit index reached Index
	KindApply      Kind = "apply"      // the node applied entry Index of Term
	KindSnapshot   Kind = "snapshot"   // the node took a snapshot
	KindRestore    Kind = "restore"    // the node restored a snapshot
	KindNote       Kind = "note"       // a verdict or message of the test harness (Text)
	// KindConf is the node switching to a membership configuration:
	// Voters and Learners, with the change that made it (Change) and its
	// log index (Index) when the log says.
	KindConf Kind = "conf"
)

// Role is a Raft role.
type Role string

// The Raft roles.
const (
	Follower  Role = "follower"
	Candidate Role = "candidate"
	Leader    Role = "leader"
	// PreCandidate is a node running a PreVote round: it asks whether it
	// could win without changing its term (chaos-node logs it).
	PreCandidate Role = "pre-candidate"
)

// Event is one thing a log says happened, in a format-independent form.
type Event struct {
	// Time is when it happened. Formats that only log the time of day have
	// the zero date; formats that log whole seconds have whole seconds.
	Time  time.Time `json:"time"`
	Node  string    `json:"node,omitempty"`
	Kind  Kind      `json:"kind"`
	Role  Role      `json:"role,omitempty"`
	Term  int       `json:"term,omitempty"`
	For   string    `json:"for,omitempty"`   // vote: the candidate voted for
	Index int       `json:"index,omitempty"` // commit, apply, conf
	Text  string    `json:"text,omitempty"`  // note: the message
	File  string    `json:"file,omitempty"`  // the file it was read from
	Line  int       `json:"line"`            // 1-based line number in File

	// Voters and Learners are a conf event's members, sorted; Change is
	// the membership change that made the configuration ("add-learner
	// n4"), "" when the log does not say or none did (a node's starting
	// configuration).
	Voters   []string `json:"voters,omitempty"`
	Learners []string `json:"learners,omitempty"`
	Change   string   `json:"change,omitempty"`
}
