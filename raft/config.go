package raft

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// ReadOnlyOption chooses how linearizable reads are confirmed.
type ReadOnlyOption uint8

const (
	// ReadSafe confirms every read index with a heartbeat round acknowledged
	// by a quorum (ReadIndex). It depends on no clock.
	ReadSafe ReadOnlyOption = iota
	// ReadLeaseBased serves reads at the leader's commit index without a
	// heartbeat round while the leader holds a lease. It requires CheckQuorum.
	//
	// The clock assumption: a leader steps down when it has not heard from a
	// quorum for ElectionTick ticks, and a follower that heard from a leader
	// within ElectionTick ticks refuses to vote. Reads are therefore safe only
	// while every node's ticks advance at the same rate, within a drift small
	// against ElectionTick. A node whose clock runs slow (or that is paused and
	// resumed) keeps believing in its lease after a new leader was elected and
	// serves stale reads. chaos-node's lease-read planted bug exploits exactly that.
	ReadLeaseBased
)

// Bugs are deliberate safety and liveness violations, off by default and
// reachable only through this explicit field, used to prove that checkers find
// real bugs. A node with any bug enabled logs so at start.
type Bugs struct {
	// ForgetVote: the vote is not persisted, so a restarted node may vote
	// twice in one term and elect two leaders. It also drops the startup
	// hold (a restarted node refusing votes for an election timeout), the
	// other thing that keeps a restarted node to its earlier promises.
	ForgetVote bool
	// CommitOldTerm: a leader commits entries of earlier terms by counting
	// replicas, the unsafe rule of the Raft paper's Figure 8.
	CommitOldTerm bool
	// NarrowElection: election timeouts are randomized over a single tick, so
	// nodes whose timers line up split the vote forever (a livelock).
	NarrowElection bool
	// ConfChangeEarly: a leader proposes a membership change while an
	// earlier one is not committed, and before it committed an entry of
	// its own term, so two changes can be in force on different nodes at
	// once and their majorities need not overlap.
	ConfChangeEarly bool
}

// BugNames lists the planted bugs this package knows.
func BugNames() []string {
	return []string{"forget-vote", "commit-old-term", "narrow-election", "conf-change-early"}
}

// Enable switches on the bug called name and reports whether name is one of
// this package's bugs.
func (b *Bugs) Enable(name string) bool {
	switch name {
	case "forget-vote":
		b.ForgetVote = true
	case "commit-old-term":
		b.CommitOldTerm = true
	case "narrow-election":
		b.NarrowElection = true
	case "conf-change-early":
		b.ConfChangeEarly = true
	default:
		return false
	}
	return true
}

// Names returns the enabled bugs' names.
func (b Bugs) Names() []string {
	var out []string
	if b.ForgetVote {
		out = append(out, "forget-vote")
	}
	if b.CommitOldTerm {
		out = append(out, "commit-old-term")
	}
	if b.NarrowElection {
		out = append(out, "narrow-election")
	}
	if b.ConfChangeEarly {
		out = append(out, "conf-change-early")
	}
	return out
}

// Config configures one node. Every field is read once, at NewRawNode.
type Config struct {
	// ID identifies this node; it must be non-zero and one of Peers.
	ID uint64
	// Peers are the voting members of a new cluster, this node included. A
	// snapshot's ConfState, and the membership entries of the log, take
	// precedence.
	Peers []uint64
	// Join starts a node that joins a running cluster: it need not be among
	// Peers (which may be empty) and learns the membership from the
	// leader's snapshot or log. Until it is a voter it never campaigns.
	Join bool
	// ElectionTick is E: a follower that hears from no leader for a timeout
	// drawn uniformly from [E, 2E) ticks starts an election. A leader steps
	// down after E ticks without a quorum (CheckQuorum).
	ElectionTick int
	// HeartbeatTick is how many ticks pass between leader heartbeats. It must
	// be smaller than ElectionTick.
	HeartbeatTick int
	// Seed seeds this node's random source (election timeouts only).
	Seed uint64
	// PreVote makes a node ask whether it could win before it bumps its term,
	// so a partitioned node rejoining does not depose a healthy leader.
	PreVote bool
	// Abstain starts a node that neither votes nor campaigns (nor takes
	// part in a leadership transfer) until RawNode.Vote: one whose storage
	// lost entries or a vote it had made durable, and which may have
	// acknowledged them. Granting a vote, it could elect a leader that
	// lacks entries it helped commit; it must first be caught up by a
	// leader (see RawNode.Vote). It still adopts newer terms, accepts
	// appends and forwards proposals and reads.
	Abstain bool
	// CheckQuorum makes a leader step down when it has not heard from a
	// quorum within ElectionTick ticks, and makes followers that heard from a
	// leader within that time ignore vote requests.
	CheckQuorum bool
	// ReadOnly chooses how reads are confirmed (default ReadSafe).
	ReadOnly ReadOnlyOption
	// MaxMsgBytes bounds the entry bytes of one append message (at least one
	// entry is always sent). 0 means 1 MiB.
	MaxMsgBytes uint64
	// MaxInflightMsgs bounds the append messages in flight to one follower in
	// the replicate state. 0 means 256.
	MaxInflightMsgs int
	// MaxInflightBytes bounds the entry bytes in flight to one follower.
	// 0 means no bound beyond MaxInflightMsgs.
	MaxInflightBytes uint64
	// Bugs plants deliberate bugs; zero means none.
	Bugs Bugs
	// Logger receives the few events worth a log line (planted bugs at start,
	// leadership changes). nil discards them.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	switch {
	case c.ID == None:
		return fmt.Errorf("raft: config: ID must be non-zero")
	case c.HeartbeatTick <= 0:
		return fmt.Errorf("raft: config: HeartbeatTick must be positive, got %d", c.HeartbeatTick)
	case c.ElectionTick <= c.HeartbeatTick:
		return fmt.Errorf("raft: config: ElectionTick (%d) must exceed HeartbeatTick (%d)", c.ElectionTick, c.HeartbeatTick)
	case c.ReadOnly == ReadLeaseBased && !c.CheckQuorum:
		return fmt.Errorf("raft: config: lease-based reads require CheckQuorum")
	case c.MaxInflightMsgs < 0:
		return fmt.Errorf("raft: config: MaxInflightMsgs must not be negative")
	}
	seen := map[uint64]bool{}
	for _, p := range c.Peers {
		if p == None {
			return fmt.Errorf("raft: config: peer ID 0 is reserved")
		}
		if seen[p] {
			return fmt.Errorf("raft: config: peer %d listed twice", p)
		}
		seen[p] = true
	}
	if c.MaxMsgBytes == 0 {
		c.MaxMsgBytes = 1 << 20
	}
	if c.MaxInflightMsgs == 0 {
		c.MaxInflightMsgs = 256
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func (c *Config) announceBugs() {
	if names := c.Bugs.Names(); len(names) > 0 {
		c.Logger.Warn("PLANTED BUGS ENABLED: this node is deliberately unsafe",
			"node", c.ID, "bugs", strings.Join(names, ","))
	}
}

func sortedVoters(v []uint64) []uint64 {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}
