package raft

import "fmt"

// None is the zero node ID: no leader, no vote.
const None uint64 = 0

// EntryType says how an entry's Data is to be interpreted.
type EntryType uint8

const (
	// EntryNormal carries an application command in Data.
	EntryNormal EntryType = iota
	// EntryNoop is the empty entry a leader appends when elected, so that it can
	// commit entries of earlier terms (Raft paper, section 5.4.2) and serve
	// ReadIndex reads. The application skips it when applying.
	EntryNoop
	// EntryConfChange changes the membership; Data is a ConfChangeEntry.
	// It takes effect when appended (see doc.go); the application skips it
	// when applying, or reads it to learn of the change.
	EntryConfChange
)

// Entry is one record of the replicated log.
type Entry struct {
	Term  uint64
	Index uint64
	Type  EntryType
	Data  []byte
}

// HardState is the state that must be durable before any message that
// depends on it is sent: the current term, the vote cast in it, and the
// commit index (persisted so a restarted node can re-apply quickly; losing
// it is safe, losing Term or Vote is not).
type HardState struct {
	Term   uint64
	Vote   uint64
	Commit uint64
}

// IsEmpty reports whether hs is the zero HardState.
func (hs HardState) IsEmpty() bool { return hs == HardState{} }

// ConfState is the cluster membership: the IDs of the voting members and
// of the learners (members that receive the log but do not vote), each
// sorted.
type ConfState struct {
	Voters   []uint64
	Learners []uint64
}

// SnapshotMeta describes the last log entry a snapshot covers.
type SnapshotMeta struct {
	Index     uint64
	Term      uint64
	ConfState ConfState
}

// Snapshot is an application state image covering the log up to Meta.Index.
type Snapshot struct {
	Meta SnapshotMeta
	Data []byte
}

// MessageType identifies a protocol message.
type MessageType uint8

// The protocol messages. Every message carries the sender's term.
const (
	MsgVote          MessageType = iota + 1 // request a vote; Index/LogTerm: candidate's last entry
	MsgVoteResp                             // Reject: vote denied
	MsgPreVote                              // ask whether a vote would be granted at Term, without changing terms
	MsgPreVoteResp                          // granted pre-votes carry the Term asked for
	MsgApp                                  // append Entries after (Index, LogTerm); Commit: leader's commit
	MsgAppResp                              // accept: Index is the last matching index; reject: see RejectHint
	MsgHeartbeat                            // Commit: min(follower match, leader commit); Context: read sequence
	MsgHeartbeatResp                        // Context: echoes the heartbeat's read sequence
	MsgSnap                                 // install Snapshot
	MsgTimeoutNow                           // leadership transfer: campaign now, skipping PreVote
	MsgReadIndex                            // follower asks the leader for a read index; Context: request id
	MsgReadIndexResp                        // Index: the read index for request Context
	MsgProp                                 // follower forwards commands to the leader; Entries: the commands, Context: request id
	MsgPropResp                             // Index: the first command's index (Term: the leader's); Reject: not appended
)

var msgNames = [...]string{
	MsgVote: "MsgVote", MsgVoteResp: "MsgVoteResp", MsgPreVote: "MsgPreVote",
	MsgPreVoteResp: "MsgPreVoteResp", MsgApp: "MsgApp", MsgAppResp: "MsgAppResp",
	MsgHeartbeat: "MsgHeartbeat", MsgHeartbeatResp: "MsgHeartbeatResp", MsgSnap: "MsgSnap",
	MsgTimeoutNow: "MsgTimeoutNow", MsgReadIndex: "MsgReadIndex", MsgReadIndexResp: "MsgReadIndexResp",
	MsgProp: "MsgProp", MsgPropResp: "MsgPropResp",
}

func (t MessageType) String() string {
	if int(t) < len(msgNames) && msgNames[t] != "" {
		return msgNames[t]
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}

// Valid reports whether t is a known message type.
func (t MessageType) Valid() bool { return t >= MsgVote && t <= MsgPropResp }

// Message is the unit of communication between nodes. Fields not named in a
// type's description are zero.
type Message struct {
	Type MessageType
	From uint64
	To   uint64
	Term uint64
	// LogTerm is the term of the entry at Index (MsgApp, votes), or on a
	// rejected MsgAppResp the term of the follower's conflicting entry (0 when
	// the follower's log is shorter than Index).
	LogTerm uint64
	Index   uint64
	Entries []Entry
	Commit  uint64
	// Reject marks a denied vote or a failed append.
	Reject bool
	// RejectHint, on a rejected MsgAppResp, is the first index of the
	// conflicting term in the follower's log, or its last index + 1 when its
	// log is shorter. It lets the leader skip a whole term per round trip.
	RejectHint uint64
	// Snapshot is set on MsgSnap.
	Snapshot *Snapshot
	// Context is the read sequence of heartbeats and the request id of reads.
	Context uint64
	// Transfer marks votes requested because of a leadership transfer; they
	// are granted even by followers that recently heard from a leader.
	Transfer bool
}

func (m Message) String() string {
	return fmt.Sprintf("%s %d->%d term=%d logterm=%d index=%d commit=%d entries=%d reject=%v hint=%d ctx=%d",
		m.Type, m.From, m.To, m.Term, m.LogTerm, m.Index, m.Commit, len(m.Entries), m.Reject, m.RejectHint, m.Context)
}

// Role is a node's part in the protocol.
type Role uint8

const (
	Follower Role = iota
	PreCandidate
	Candidate
	Leader
)

func (r Role) String() string {
	switch r {
	case Follower:
		return "follower"
	case PreCandidate:
		return "pre-candidate"
	case Candidate:
		return "candidate"
	case Leader:
		return "leader"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// SoftState is volatile state worth reporting: who leads, and in which role
// this node is. It need not be persisted.
type SoftState struct {
	Lead uint64
	Role Role
}

// ReadState releases a linearizable read: the read with id Ctx may be served
// once the application has applied the log up to Index.
type ReadState struct {
	Index uint64
	Ctx   uint64
}

// ProposalResult answers a proposal this node forwarded to its leader
// (RawNode.ForwardProposal): the leader appended its commands from Index
// on in its term Term, or, when Dropped, appended nothing.
type ProposalResult struct {
	Ctx     uint64
	Index   uint64
	Term    uint64
	Dropped bool
}

// State is what a node recovered from stable storage at start: the hard
// state, the newest snapshot (nil if none) and the log entries after it.
type State struct {
	HardState HardState
	Snapshot  *Snapshot
	Entries   []Entry
}
