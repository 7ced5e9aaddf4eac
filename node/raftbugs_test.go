//go:build linux

package node_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/eventlog"
	"chaos/raftcheck"
)

// The planted raft bugs are provoked on real chaos node processes: a script
// drives a three-node cluster with fault hooks, SIGKILL and restarts into
// the interleaving each bug needs, acting on what the nodes' event logs
// show, and raftcheck.Raft must find the violation in those logs. The same
// script against correct nodes must leave logs the checker finds clean.
//
// Random schedules rarely hit these interleavings: the nemesis kills and
// partitions of `chaos run` found no forget-vote violation in eight runs.

const (
	baseForgetVoteBug  = 100
	baseForgetVoteSafe = 110
	baseOldTermBug     = 120
	baseOldTermSafe    = 130
)

func scriptCluster(t *testing.T, base int, bug string) *cluster {
	t.Helper()
	args := []string{"--enable-fault-hooks", "--heartbeat-interval", scriptHeartbeat,
		"--election-timeout", scriptElection.String(), "--max-append-bytes", "1"}
	if bug != "" {
		args = append(args, "--bug", bug)
	}
	return newCluster(t, base, 3, args...)
}

// checkRaft stops c and runs the raft check over its event logs, which it
// keeps under the scenario's name; it requires the verdict want.
func checkRaft(t *testing.T, c *cluster, scenario string, want checker.Validity) *raftcheck.RaftDetails {
	t.Helper()
	c.stopAll()
	res := raftcheck.Raft(c.runEvents(scenario))
	d := res.Details.(*raftcheck.RaftDetails)
	require.Equal(t, want, res.Valid, "violations: %v", d.Violations)
	return d
}

func TestRealRunForgetVote(t *testing.T) {
	t.Parallel()
	c := scriptCluster(t, baseForgetVoteBug, "forget-vote")
	out := forgetVoteScript(t, c)
	d := checkRaft(t, c, "forget-vote", checker.Invalid)
	require.True(t, hasViolation(d, raftcheck.KindDoubleVote, out.voter, out.term),
		"%s voted twice in term %d; violations: %v", out.voter, out.term, d.Violations)
	if len(out.leaders) == 2 {
		require.True(t, hasViolation(d, raftcheck.KindElectionSafety, "", out.term),
			"%v both led term %d; violations: %v", out.leaders, out.term, d.Violations)
	}
}

func TestRealRunForgetVoteScriptOnCorrectNodes(t *testing.T) {
	t.Parallel()
	c := scriptCluster(t, baseForgetVoteSafe, "")
	forgetVoteScript(t, c)
	checkRaft(t, c, "forget-vote-correct", checker.Valid)
}

func TestRealRunCommitOldTerm(t *testing.T) {
	t.Parallel()
	c := scriptCluster(t, baseOldTermBug, "commit-old-term")
	index := commitOldTermScript(t, c)
	d := checkRaft(t, c, "commit-old-term", checker.Invalid)
	require.True(t, hasViolation(d, raftcheck.KindStateMachineSafety, "", index),
		"index %d applied differently; violations: %v", index, d.Violations)
}

func TestRealRunCommitOldTermScriptOnCorrectNodes(t *testing.T) {
	t.Parallel()
	c := scriptCluster(t, baseOldTermSafe, "")
	commitOldTermScript(t, c)
	checkRaft(t, c, "commit-old-term-correct", checker.Valid)
}

// hasViolation reports whether d lists a violation of kind on node (any
// node if "") at term or index n (a term for double votes, an index for
// state machine safety).
func hasViolation(d *raftcheck.RaftDetails, kind, node string, n uint64) bool {
	for _, v := range d.Violations {
		if v.Kind == kind && (node == "" || v.Node == node) && (v.Term == n || v.Index == n) {
			return true
		}
	}
	return false
}

// forgetVoteScript makes a voter vote twice in one term if it forgets its
// vote across a restart, and returns that voter and term:
//
//  1. The leader l (term t) is cut off. Its followers a and b elect a new
//     leader over a link slowed from a to b, so that between a vote and
//     the new leader's first append there is time to act.
//  2. As soon as voter v has voted for x in term t+1, x's messages to v are
//     cut, and once x leads (or after a second) v is killed: v has voted
//     in t+1 but holds no entry of it.
//  3. x is cut off; v restarts with a long election timeout, so that l,
//     still in term t, campaigns first. l asks for v's vote in term t+1;
//     a v that forgot its vote grants it, and l leads term t+1 too.
//
// On correct nodes v refuses, and l is elected in a later term.
func forgetVoteScript(t *testing.T, c *cluster) (out doubleVote) {
	retryScript(t, c, func(n int) error {
		l, st := c.waitLeader()
		c.waitCaughtUp()
		f := c.followers(l)
		a, b := f[0], f[1]
		t.Logf("attempt %d: leader %s in term %d; %s->%s slow", n, l.name, st.Term, a.name, b.name)
		cutAt := time.Now()
		c.drop(l, a, b)
		c.drop(a, l)
		c.drop(b, l)
		c.slowLink(a, b)
		vote, ok := awaitEvent(t, 4*scriptElection, f, isVote(f, st.Term))
		if !ok {
			return errors.New("no vote between the followers")
		}
		if vote.Term != st.Term+1 {
			return fmt.Errorf("the first vote was in term %d, which %s cannot campaign into", vote.Term, l.name)
		}
		v, x := c.byName[vote.Node], c.byName[vote.For]
		c.cutAfterVote(x, v, a, l)
		if tooLate(vote) {
			return fmt.Errorf("cut %s off %s too late after its vote", v.name, x.name)
		}
		_, led := awaitEvent(t, time.Second, []*proc{x}, isLeader(x.name, st.Term))
		out = doubleVote{voter: v.name, term: vote.Term}
		if led {
			out.leaders = append(out.leaders, x.name)
		}
		v.kill()
		t.Logf("%s voted for %s in term %d and was killed; %s leads it: %v", v.name, x.name, vote.Term, x.name, led)

		// l must have stepped down before it meets v: a leader's heartbeat
		// would teach it v's term, and l must campaign into that term.
		if _, ok := awaitEvent(t, 3*scriptElection, []*proc{l}, func(e eventlog.Event) bool {
			return e.Event == "role" && e.Role != "leader" && e.Term == st.Term && e.Time.After(cutAt)
		}); !ok {
			t.Fatalf("%s, cut off, never stepped down", l.name)
		}
		c.isolate(x, l, v)
		c.isolate(l, x)
		v.args = append(v.args, "--election-timeout", (2 * scriptElection).String())
		v.start()
		c.waitUp(v)
		end, ok := awaitEvent(t, 10*scriptElection, []*proc{l, v}, func(e eventlog.Event) bool {
			return isLeader(l.name, st.Term)(e) || isLeader(v.name, st.Term)(e)
		})
		if !ok {
			t.Fatalf("neither %s nor %s became leader after %s restarted", l.name, v.name, v.name)
		}
		t.Logf("%s leads term %d", end.Node, end.Term)
		if end.Term == vote.Term {
			out.leaders = append(out.leaders, end.Node)
		}
		return nil
	})
	return out
}

// doubleVote is what forgetVoteScript provoked: voter's vote in term (for
// two candidates, if it forgot the first), and who led that term.
type doubleVote struct {
	voter   string
	term    uint64
	leaders []string
}

// commitOldTermScript plays Figure 8 of the Raft paper on three nodes and
// returns the index at stake. A leader that commits an entry of an earlier
// term by counting replicas applies it, and a later leader overwrites it:
//
//  1. The leader l (term t) is cut off and appends entry e at index i,
//     which nobody else gets. Its followers elect x in term t' > t over a
//     slowed link; x's messages to the voter v are cut the moment v has
//     voted, so x's own first entry, also at i, stays on x alone.
//  2. x is cut off. l comes back to v alone, over a slow link, and is
//     elected in term t'+1 (its log ends in term t, v's earlier). With one
//     entry per append message, l sends e before its own new entry; the
//     bug commits e as soon as v acknowledges it, and the script then cuts
//     l off before its next append reaches v.
//  3. x (log ending in term t' > t) is elected by v, replaces e on v with
//     its own entry at i and commits it: l and v apply different entries
//     at i.
//
// On correct nodes l commits i only with its new entry on v, which x can
// then never win v's vote against.
func commitOldTermScript(t *testing.T, c *cluster) (index uint64) {
	retryScript(t, c, func(n int) error {
		l, _ := c.waitLeader()
		st := c.waitCaughtUp()
		f := c.followers(l)
		p, q := f[0], f[1]
		i := st.LastIndex + 1
		t.Logf("attempt %d: leader %s in term %d, next index %d; %s->%s slow", n, l.name, st.Term, i, p.name, q.name)
		c.drop(l, p, q)
		c.drop(p, l)
		c.drop(q, l)
		c.put(l, "fig8", fmt.Sprintf("attempt %d", n))
		if lst, err := c.status(l); err != nil || lst.LastIndex != i {
			return fmt.Errorf("%s did not append the write at %d: %+v %v", l.name, i, lst, err)
		}
		c.slowLink(p, q)
		vote, ok := awaitEvent(t, 4*scriptElection, f, isVote(f, st.Term))
		if !ok {
			return errors.New("no vote between the followers")
		}
		v, x := c.byName[vote.Node], c.byName[vote.For]
		c.cutAfterVote(x, v, p, l)
		if tooLate(vote) {
			return fmt.Errorf("cut %s off %s too late after its vote", v.name, x.name)
		}
		if _, ok := awaitEvent(t, time.Second, []*proc{x}, isLeader(x.name, st.Term)); !ok {
			return fmt.Errorf("%s got %s's vote in term %d but did not lead", x.name, v.name, vote.Term)
		}
		t.Logf("%s leads term %d with an entry at %d that %s does not hold", x.name, vote.Term, i, v.name)

		c.isolate(x, l, v)
		c.isolate(v, x)
		c.isolate(l, x)
		c.slowLink(l, v)
		lead, ok := awaitEvent(t, 4*scriptElection, []*proc{l}, isLeader(l.name, vote.Term))
		if !ok {
			return fmt.Errorf("%s was not elected by %s", l.name, v.name)
		}
		commit, ok := awaitEvent(t, 4*scriptElection, []*proc{l}, func(e eventlog.Event) bool {
			return e.Event == "commit" && e.Index >= i && e.Node == l.name
		})
		if !ok {
			return fmt.Errorf("%s, leader in term %d, did not commit index %d", l.name, lead.Term, i)
		}
		c.drop(v, x, l)
		if tooLate(commit) {
			return fmt.Errorf("cut %s off %s too late after its commit", v.name, l.name)
		}
		t.Logf("%s, leader in term %d, committed %d", l.name, lead.Term, commit.Index)

		c.drop(l, x, v)
		c.clearFaults(x)
		c.drop(v, l)
		end, ok := awaitEvent(t, 10*scriptElection, []*proc{v}, func(e eventlog.Event) bool {
			return e.Event == "apply" && e.Index == i && e.Node == v.name
		})
		if !ok {
			t.Fatalf("%s never applied index %d after %s was cut off", v.name, i, l.name)
		}
		t.Logf("%s applied index %d as term %d", v.name, i, end.Term)
		index = i
		return nil
	})
	return index
}
