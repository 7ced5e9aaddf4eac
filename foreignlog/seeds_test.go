package foreignlog

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedPath returns the path of a seed log in testdata/seeds (copies of the
// real logs of other Raft implementations, so a clone stands alone).
func seedPath(t *testing.T, prefix string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join("testdata", "seeds", prefix+"_*.txt"))
	require.Len(t, matches, 1, "seed log testdata/seeds/%s_*.txt", prefix)
	return matches[0]
}

// readSeed reads a seed log, detecting its format, and analyses it.
func readSeed(t *testing.T, prefix, wantFormat string) (Log, Report) {
	t.Helper()
	l, err := ReadFile(seedPath(t, prefix), "")
	require.NoError(t, err)
	require.Equal(t, wantFormat, l.Format)
	return l, NewReport(l)
}

// leadersByTerm maps each term to the nodes that led it, in order.
func leadersByTerm(f Facts) map[int]string {
	m := map[int]string{}
	for _, t := range f.Leaders {
		m[t.Term] += t.Node
	}
	return m
}

// faultsOf lists "node kind" for every fault of the given kinds.
func faultsOf(f Facts, kinds ...string) []string {
	var out []string
	for _, x := range f.Faults {
		for _, k := range kinds {
			if x.Kind == k {
				out = append(out, x.Node+" "+x.Kind)
			}
		}
	}
	return out
}

// at is the offset of a time of day (seeds 001 and 004) from the log start.
func at(t *testing.T, f Facts, clock string) time.Duration {
	t.Helper()
	c, err := time.Parse("15:04:05.999999", clock)
	require.NoError(t, err)
	return c.Sub(f.Start)
}

// Seed 000, read by hand: five Lua nodes; the leader is crashed about 3 s
// after it is elected ("CRASH NOW n", then "ANIM START n" again) and a new
// leader is elected, terms 1..17. Term 9 had no leader: after node 2 (term
// 8) crashed, nodes 4, 1 and 3 all stood at once (split vote) and node 4
// won term 10.
func TestSeed000Splay(t *testing.T) {
	l, r := readSeed(t, "000", "splay")
	f := r.Facts
	assert.Equal(t, 0, l.Stats.Unparsed)
	assert.Equal(t, []string{"1", "2", "3", "4", "5"}, f.Nodes)
	assert.Equal(t, map[int]string{1: "5", 2: "3", 3: "4", 4: "5", 5: "3", 6: "5", 7: "3", 8: "2",
		10: "4", 11: "3", 12: "4", 13: "3", 14: "5", 15: "1", 16: "4", 17: "1"}, leadersByTerm(f))
	assert.Empty(t, f.TwoLeaderTerms)
	assert.Equal(t, []int{9}, f.Churn.LeaderlessTerms)
	assert.Equal(t, []string{"5 crash", "3 crash", "4 crash", "5 crash", "3 crash", "5 crash", "3 crash", "2 crash",
		"4 crash", "3 crash", "4 crash", "3 crash", "5 crash", "1 crash", "4 crash"}, faultsOf(f, "crash"))
	assert.Len(t, faultsOf(f, "restart"), 15)
	for _, ten := range f.Leaders[:len(f.Leaders)-1] {
		assert.Equal(t, "crash", ten.EndedBy, "term %d", ten.Term)
		assert.InDelta(t, 3.0, (ten.End - ten.Start).Seconds(), 0.1, "term %d", ten.Term)
	}
	last := f.Leaders[len(f.Leaders)-1]
	assert.True(t, last.Open, "node 1 still leads term 17 when the log ends")
	// One leaderless window before the first election and one after each
	// crash of a leader; the one after term 8 spans the failed term 9.
	require.Len(t, f.Leaderless, 16)
	assert.Equal(t, Window{Start: f.Leaderless[8].Start, End: f.Leaderless[8].End, FromTerm: 8, ToTerm: 10}, f.Leaderless[8])
	assert.InDelta(t, 3.4, (f.Leaderless[8].End - f.Leaderless[8].Start).Seconds(), 0.1)
}

// Seed 001, read by hand: node 2 wins term 1, the test disconnects it,
// node 3 wins term 2 while 2 still believes it leads term 1; 2 is
// reconnected, steps down to follower of term 2, and the test stops all
// five nodes. It passes.
func TestSeed001Table(t *testing.T) {
	l, r := readSeed(t, "001", "table")
	f := r.Facts
	assert.Equal(t, 0, l.Stats.Unparsed)
	assert.Equal(t, map[int]string{1: "2", 2: "3"}, leadersByTerm(f))
	assert.Empty(t, f.TwoLeaderTerms)
	assert.Empty(t, f.Churn.LeaderlessTerms)
	assert.Equal(t, []string{"2 disconnect", "2 reconnect"}, faultsOf(f, "disconnect", "reconnect"))
	assert.Len(t, faultsOf(f, "stop"), 5)
	assert.Empty(t, faultsOf(f, "crash", "restart"))
	require.Len(t, f.Leaders, 2)
	assert.Equal(t, at(t, f, "19:13:08.955761"), f.Leaders[0].Start)
	assert.Equal(t, at(t, f, "19:13:09.415100"), f.Leaders[0].End)
	assert.Equal(t, "became follower", f.Leaders[0].EndedBy)
	assert.Equal(t, at(t, f, "19:13:09.270020"), f.Leaders[1].Start)
	assert.Equal(t, "stop", f.Leaders[1].EndedBy)
	// No leader before the first election, and none of term 2 from node
	// 3's candidacy to its victory; the final shutdown is not a window.
	require.Len(t, f.Leaderless, 2)
	assert.Equal(t, at(t, f, "19:13:09.265998"), f.Leaderless[1].Start)
	assert.Equal(t, at(t, f, "19:13:09.270020"), f.Leaderless[1].End)
	require.Len(t, f.Notes, 1)
	assert.True(t, strings.HasPrefix(f.Notes[0].Text, "PASS TestElectionLeaderDisconnectAndReconnect5Nodes"))
}

// Seed 002, read by hand: three etcd nodes replay their WAL at term 9, node
// 1 wins term 10 (node 2 votes for it), node 2 times out and wins term 11
// (node 3 votes for it); node 1 learns of term 11 and follows.
func TestSeed002EtcdTrace(t *testing.T) {
	l, r := readSeed(t, "002", "etcd-trace")
	f := r.Facts
	assert.Equal(t, 0, l.Stats.Unparsed)
	assert.Equal(t, []string{"1", "2", "3"}, f.Nodes)
	assert.Equal(t, map[int]string{10: "1", 11: "2"}, leadersByTerm(f))
	assert.Equal(t, "became follower", f.Leaders[0].EndedBy)
	assert.True(t, f.Leaders[1].Open)
	assert.Empty(t, f.TwoLeaderTerms)
	assert.Equal(t, 9, f.Churn.FirstTerm)
	assert.Equal(t, 11, f.Churn.LastTerm)
	assert.Equal(t, []int{9}, f.Churn.LeaderlessTerms, "the log starts in term 9 without its leader")
	assert.Empty(t, f.Faults)
	var votes []string
	for _, ev := range r.Events {
		if ev.Kind == KindVote {
			votes = append(votes, ev.Node+"→"+ev.For)
		}
	}
	assert.Equal(t, []string{"2→1", "3→2"}, votes)
}

// Seed 003, read by hand: a course Raft under an unreliable network; terms
// churn from 121 to 143, only node 2 ever wins (term 127), votes are denied
// because the voters' logs are newer, and the test fails to reach
// agreement. The 19 lines starting "===" are notes a person added to the
// log, not part of the format.
func TestSeed003Course(t *testing.T) {
	l, r := readSeed(t, "003", "course")
	f := r.Facts
	assert.Equal(t, 19, l.Stats.Unparsed)
	assert.Equal(t, 328, l.Stats.FirstUnparsed[4], "=== server2最后一次成为了leader，term为127")
	assert.Equal(t, []string{"0", "1", "2", "3", "4"}, f.Nodes)
	assert.Equal(t, map[int]string{127: "2"}, leadersByTerm(f))
	assert.Equal(t, 121, f.Churn.FirstTerm)
	assert.Equal(t, 143, f.Churn.LastTerm)
	assert.Len(t, f.Churn.LeaderlessTerms, 22)
	assert.Equal(t, []int{128, 143}, f.Churn.LongestLeaderlessRun)
	assert.Greater(t, f.Churn.TermsPerSecond, 3.0)
	assert.Empty(t, f.TwoLeaderTerms)
	assert.True(t, f.Leaderless[len(f.Leaderless)-1].Open, "no leader when the test gives up")
	var notes []string
	for _, n := range f.Notes {
		notes = append(notes, n.Text)
	}
	assert.Equal(t, []string{"--- FAIL: TestFigure8Unreliable3C (43.98s)", "config.go:605: one(9000) failed to reach agreement"}, notes)
}

// Seed 004, read by hand: three nodes with 5-9 ms election timers stand
// together in every term, each votes for itself, and no leader is elected
// in 71 terms ("leader not found"); the test then stops them. The markdown
// fences, the shell lines and the two Vietnamese notes are not the format.
func TestSeed004Eliben(t *testing.T) {
	l, r := readSeed(t, "004", "eliben")
	f := r.Facts
	assert.Equal(t, 52, l.Stats.Unparsed)
	assert.Equal(t, []int{3, 4}, l.Stats.FirstUnparsed[:2])
	assert.Equal(t, []string{"0", "1", "2"}, f.Nodes)
	assert.Empty(t, f.Leaders)
	assert.Equal(t, 1, f.Churn.FirstTerm)
	assert.Equal(t, 71, f.Churn.LastTerm)
	assert.Equal(t, []int{1, 71}, f.Churn.LongestLeaderlessRun)
	require.Len(t, f.Leaderless, 1)
	assert.True(t, f.Leaderless[0].Open)
	assert.Equal(t, at(t, f, "13:43:33.422806"), f.Leaderless[0].Start)
	assert.Equal(t, []string{"0 stop", "1 stop", "2 stop"}, faultsOf(f, "stop"))
	assert.Equal(t, "testharness.go:137: leader not found", f.Notes[0].Text)
	// In every term the file shows, all three nodes stand. The file is an
	// excerpt: it jumps from term 34 (line 1056) to term 63 and skips 69
	// and 70, so 40 of the 71 terms have candidates in it.
	cands := map[int]int{}
	for _, ev := range r.Events {
		if ev.Kind == KindRole && ev.Role == Candidate {
			cands[ev.Term]++
		}
	}
	assert.Len(t, cands, 40)
	for term, n := range cands {
		assert.Equal(t, 3, n, "term %d", term)
	}
}
