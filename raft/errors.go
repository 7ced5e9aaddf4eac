package raft

import "errors"

// Sentinel errors say what happened; callers compare with errors.Is.
var (
	// ErrProposalDropped: the proposal was not appended (this node is not the
	// leader, or a leadership transfer is in progress). Nothing was applied.
	ErrProposalDropped = errors.New("raft: proposal dropped")
	// ErrNoLeader: no leader is known, so a read cannot be forwarded.
	ErrNoLeader = errors.New("raft: no leader")
	// ErrNotLeader: the operation needs this node to lead.
	ErrNotLeader = errors.New("raft: not leader")
	// ErrCompacted: the requested index is covered by a snapshot.
	ErrCompacted = errors.New("raft: index compacted")
	// ErrUnavailable: the requested index is past the end of the log.
	ErrUnavailable = errors.New("raft: index unavailable")
	// ErrUnknownPeer: a message or request names a node outside the cluster.
	ErrUnknownPeer = errors.New("raft: unknown peer")
)
