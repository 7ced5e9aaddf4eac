package raftcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/eventlog"
)

// nodeLog builds one node's event log line by line, a millisecond apart.
type nodeLog struct {
	node string
	evs  []eventlog.Event
}

func (l *nodeLog) add(e eventlog.Event) *nodeLog {
	e.Node, e.Line = l.node, len(l.evs)+1
	e.Time = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).Add(time.Duration(len(l.evs)) * time.Millisecond)
	l.evs = append(l.evs, e)
	return l
}

// start is a start event carrying the recovered term, vote and last index.
func (l *nodeLog) start(term uint64, vote string, last uint64) *nodeLog {
	return l.add(eventlog.Event{Event: eventlog.KindStart, Term: term, For: vote, Index: last})
}

func (l *nodeLog) vote(term uint64, vote string) *nodeLog {
	return l.add(eventlog.Event{Event: eventlog.KindVote, Term: term, For: vote})
}

func (l *nodeLog) apply(index uint64) *nodeLog {
	return l.add(eventlog.Event{Event: eventlog.KindApply, Index: index, Term: 1, Hash: "h"})
}

func (l *nodeLog) at(e eventlog.Event) *nodeLog { return l.add(e) }

// lessViolations checks l's events and returns the came-back-with-less
// violations, requiring every other violation kind to be absent.
func lessViolations(t *testing.T, l *nodeLog) []Violation {
	t.Helper()
	r := Raft(l.evs)
	d := raftDetails(t, r)
	var out []Violation
	for _, v := range d.Violations {
		require.Equal(t, KindCameBackWithLess, v.Kind, "only came-back-with-less: %+v", v)
		out = append(out, v)
	}
	if len(out) == 0 {
		assert.Equal(t, checker.Valid, r.Valid)
	} else {
		assert.Equal(t, checker.Invalid, r.Valid)
	}
	return out
}

func TestCameBackWithoutItsVote(t *testing.T) {
	l := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).vote(3, "n2").start(3, eventlog.NoVote, 0)
	vs := lessViolations(t, l)
	require.Len(t, vs, 1)
	assert.Equal(t, 3, vs[0].Line)
	assert.Equal(t, uint64(3), vs[0].Term)
	assert.Contains(t, vs[0].Text, "after voting for n2 in that term")
}

func TestCameBackWithAnotherVote(t *testing.T) {
	l := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).vote(3, "n2").start(3, "n3", 0)
	require.Len(t, lessViolations(t, l), 1)
}

func TestCameBackWithItsVoteOrALaterTerm(t *testing.T) {
	kept := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).vote(3, "n2").start(3, "n2", 0)
	assert.Empty(t, lessViolations(t, kept))
	later := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).vote(3, "n2").start(4, eventlog.NoVote, 0)
	assert.Empty(t, lessViolations(t, later), "a later term without a vote is more, not less")
}

func TestCameBackWithALogShorterThanItApplied(t *testing.T) {
	l := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).apply(1).apply(2).apply(3).start(1, eventlog.NoVote, 2)
	vs := lessViolations(t, l)
	require.Len(t, vs, 1)
	assert.Equal(t, 5, vs[0].Line)
	assert.Contains(t, vs[0].Text, "log ending at index 2, after it had index 3 durable")
}

func TestCameBackWithLessThanItRecoveredOrSnapshotted(t *testing.T) {
	recovered := (&nodeLog{node: "n1"}).start(1, eventlog.NoVote, 7).start(1, eventlog.NoVote, 6)
	require.Len(t, lessViolations(t, recovered), 1, "an earlier start's index was durable")
	snap := (&nodeLog{node: "n1"}).start(1, eventlog.NoVote, 0).
		at(eventlog.Event{Event: eventlog.KindSnapshot, Index: 9, Term: 1}).start(1, eventlog.NoVote, 8)
	require.Len(t, lessViolations(t, snap), 1, "a snapshot's index was durable")
	same := (&nodeLog{node: "n1"}).start(1, eventlog.NoVote, 0).
		at(eventlog.Event{Event: eventlog.KindSnapshot, Index: 9, Term: 1}).start(1, eventlog.NoVote, 9)
	assert.Empty(t, lessViolations(t, same))
}

func TestACommitIndexIsNoEvidenceOfDurability(t *testing.T) {
	l := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).apply(1).
		at(eventlog.Event{Event: eventlog.KindCommit, Index: 5}).start(1, eventlog.NoVote, 1)
	assert.Empty(t, lessViolations(t, l), "a commit index is written without an fsync of its own")
}

func TestStartsOfOlderEventLogsAreNotJudged(t *testing.T) {
	l := (&nodeLog{node: "n1"}).at(eventlog.Event{Event: eventlog.KindStart}).vote(3, "n2").apply(4).
		at(eventlog.Event{Event: eventlog.KindStart, Term: 3})
	assert.Empty(t, lessViolations(t, l))
}

func TestALowerTermIsTermDecreasedOnly(t *testing.T) {
	l := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).vote(3, "n2").start(2, eventlog.NoVote, 0)
	d := raftDetails(t, Raft(l.evs))
	assert.Equal(t, map[string]int{KindTermDecreased: 1}, d.Counts)
}

func TestLessAfterCuttingADamagedTailIsTheFaults(t *testing.T) {
	l := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).vote(2, "n3").apply(1).apply(2).
		at(eventlog.Event{Event: eventlog.KindStart, Term: 2, For: eventlog.NoVote, Index: 1, Truncated: 40})
	r := Raft(l.evs)
	d := raftDetails(t, r)
	assert.Equal(t, checker.Valid, r.Valid, "a loss the fault caused is no violation")
	assert.Empty(t, d.Counts)
	require.Len(t, d.Damaged, 2, "the vote and the log, listed")
	for _, v := range d.Damaged {
		assert.Equal(t, KindLostToDamage, v.Kind)
		assert.Equal(t, 5, v.Line)
	}
	assert.Contains(t, strings.Join(d.Findings(), "\n"), "not a violation, a fault's: n1 restarted in term 2 with vote none")
}

// A lower term at a start that cut a damaged tail off is the fault's too:
// the records that raised the term were in that tail.
func TestALowerTermAfterCuttingADamagedTailIsTheFaults(t *testing.T) {
	l := (&nodeLog{node: "n1"}).start(0, eventlog.NoVote, 0).vote(3, "n2").
		at(eventlog.Event{Event: eventlog.KindStart, Term: 2, For: eventlog.NoVote, Truncated: 40})
	r := Raft(l.evs)
	d := raftDetails(t, r)
	assert.Equal(t, checker.Valid, r.Valid)
	assert.Empty(t, d.Counts)
	require.Len(t, d.Damaged, 1)
	assert.Equal(t, KindLostToDamage, d.Damaged[0].Kind)
	assert.Contains(t, d.Damaged[0].Text, "restarted with term 2 after reaching term 3")
}

// What a damaged start lost is the fault's once: a later start is judged
// against what the node came back with and did after, not against its
// lives before the damage. Seed 39009 of bugs.yaml's correct-storage: n5
// voted for n3 in term 3, its WAL was damaged, it came back in term 2,
// caught up to term 3 without voting, and its next start, in term 3 with
// no vote, was reported as a vote lost.
func TestAStartAfterADamagedOneIsJudgedAgainstWhatItRecovered(t *testing.T) {
	l := (&nodeLog{node: "n5"}).start(0, eventlog.NoVote, 0).vote(2, "n1").vote(3, "n3").apply(1).apply(2).apply(3).
		at(eventlog.Event{Event: eventlog.KindStart, Term: 2, For: "n1", Index: 1, Lost: "valid records end at byte 32029, but 90601 bytes were fsynced"}).
		apply(2).start(3, eventlog.NoVote, 2)
	r := Raft(l.evs)
	d := raftDetails(t, r)
	assert.Equal(t, checker.Valid, r.Valid, "%+v", d.Violations)
	assert.Empty(t, d.Counts)
	require.Len(t, d.Damaged, 2, "the term and the log, at the damaged start: %+v", d.Damaged)

	// Without the damage, the same later start lost a vote: a violation.
	l = (&nodeLog{node: "n5"}).start(0, eventlog.NoVote, 0).vote(3, "n3").apply(1).start(3, eventlog.NoVote, 1)
	assert.Len(t, lessViolations(t, l), 1)
	// And after a damaged start, a vote the node casts again is kept.
	l = (&nodeLog{node: "n5"}).start(0, eventlog.NoVote, 0).vote(3, "n3").
		at(eventlog.Event{Event: eventlog.KindStart, Term: 2, For: eventlog.NoVote, Truncated: 9}).
		vote(4, "n2").start(4, eventlog.NoVote, 0)
	require.Len(t, lessViolations(t, l), 1)
}
