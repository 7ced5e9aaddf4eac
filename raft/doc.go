// Package raft is a deterministic implementation of the Raft consensus
// protocol: leader election with PreVote and CheckQuorum, log replication
// with conflict hints and a bounded pipeline, the commit rule of section
// 5.4.2, linearizable reads by ReadIndex (or, opt-in, a leader lease),
// snapshots with log compaction and snapshot transfer, leadership
// transfer, and fast failover (RawNode.PeerLost: a follower told that the
// connection from its leader ended campaigns at once; safety never depends
// on the notice being true, and lease reads ignore it).
//
// The core, RawNode, starts no goroutines, reads no clock and does no I/O.
// Time is logical: each Tick is one unit and timeouts are counted in ticks.
// Randomness (election timeouts only) comes from a source seeded by
// Config.Seed. Given the same configuration and the same sequence of calls,
// a RawNode produces the same output, which is what lets a simulator replay
// any failure from its seed.
//
// # The Ready loop
//
// The application drives a RawNode from a single goroutine:
//
//	for {
//		select {
//		case <-ticker:     rn.Tick()
//		case m := <-recv:  rn.Step(m)
//		case p := <-props: rn.Propose(p)
//		}
//		if rn.HasReady() {
//			rd := rn.Ready()
//			persist(rd.HardState, rd.Snapshot, rd.Entries) // fsync if rd.MustSync
//			send(rd.Messages)
//			apply(rd.Snapshot, rd.CommittedEntries)
//			serveReads(rd.ReadStates)
//			rn.Advance()
//		}
//	}
//
// # The persistence contract
//
// Raft is safe across crashes only if what a node promised survives them:
//
//   - Term and Vote must be durable before any message of that term is sent.
//     A vote sent and then forgotten lets a node vote twice in one term and
//     elect two leaders (the forget-vote planted bug does exactly this).
//   - Entries must be durable before the MsgAppResp that acknowledges them
//     is sent: the leader counts that answer toward committing them. The
//     leader's own entries count toward a quorum only after Advance.
//   - A snapshot received from the leader must be durable before its
//     acknowledgement is sent.
//   - Entries handed out earlier at indexes >= Entries[0].Index must be
//     dropped from storage when a Ready's Entries overwrite them.
//   - The commit index (HardState.Commit) may be lost; it is only an
//     optimisation for restarts.
//   - A snapshot taken with Compact must be durable before the log entries it
//     covers are deleted from storage.
//
// Ready enforces the order by construction: every message of a round is
// handed out together with the state it depends on, and the application
// persists first, then sends, except when Ready.SendFirst says the messages
// are a leader's, which depend on nothing of the round: then the leader's
// disk write overlaps its followers' (Raft thesis, section 10.2.1). A
// leader that crashes after sending and before its write loses entries
// nobody could have committed: its own copy counts only after Advance.
//
// # Proposals
//
// A leader appends commands with Propose, which returns their first index.
// A follower forwards them with ForwardProposal: the leader appends them
// as its own and answers where (a ProposalResult: index and term), or that
// it dropped them; an answer that never comes (lost, or leadership moved)
// leaves their outcome unknown. Either way a command took effect at its
// index exactly when the entry applied there has the term it was given.
//
// # Reads
//
// ReadIndex records the leader's commit index, confirms with a heartbeat
// round acknowledged by a quorum that no newer leader exists, and releases a
// ReadState; the read is linearizable once served from a state machine
// applied at least up to ReadState.Index. A new leader answers reads only
// after committing the empty entry of its term.
//
// # Membership changes
//
// The membership changes one server at a time (Raft thesis, chapter 4),
// by entries of type EntryConfChange that RawNode.ProposeConfChange
// appends: add a learner (it receives the log, neither votes nor counts
// toward a quorum), promote a learner to voter, remove a voter or a
// learner. Any majority of the voters before a single change overlaps any
// majority after it, so nodes that use either configuration cannot elect
// two leaders in one term.
//
//   - A configuration is in force on a node from the moment the node
//     appends its entry, committed or not (thesis, section 4.1); a node
//     whose log loses the entry goes back to the configuration before it.
//     Each entry carries the whole configuration it makes, so a node that
//     joins with an empty log (Config.Join) learns the membership from it.
//   - A leader proposes a change only once it committed an entry of its
//     own term, and only when no earlier change is uncommitted: one change
//     at a time, and never one on top of a change a previous leader left
//     uncommitted, which Ongaro's correction of the single-server algorithm
//     showed can let two disjoint majorities decide.
//   - The configuration is part of the log, and of snapshots
//     (SnapshotMeta.ConfState, as of the snapshot's index): a restarted
//     node finds it in its storage, nothing else needs persisting.
//   - A leader removed from the voters keeps replicating, not counting
//     itself, until the change commits; then it steps down and, no voter,
//     never campaigns again. Learners never campaign either, and votes of
//     nodes that are not voters are not counted.
//   - A removed node that never learns of its removal campaigns on: with
//     PreVote (its log is behind) or CheckQuorum (the others hear a leader)
//     it cannot disturb the cluster; without either it deposes leader after
//     leader (thesis, section 4.2.3). Stop removed nodes, or use one of them.
//   - Leadership is transferred to voters only.
//
// # Planted bugs
//
// Config.Bugs switches on deliberate violations (forget-vote,
// commit-old-term, narrow-election, conf-change-early) so that checkers can
// be proven to find real bugs. They are off unless set explicitly, and announced at start.
package raft
