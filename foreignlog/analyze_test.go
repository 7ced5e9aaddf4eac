package foreignlog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// base is the time of the synthetic events.
var base = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

// ev builds a synthetic event ms milliseconds after base.
func ev(ms int, node string, kind Kind, role Role, term int) Event {
	return Event{Time: base.Add(time.Duration(ms) * time.Millisecond), Node: node, Kind: kind, Role: role, Term: term}
}

func TestTwoLeadersInOneTerm(t *testing.T) {
	f := Analyze([]Event{
		ev(0, "a", KindRole, Leader, 1),
		ev(100, "b", KindRole, Leader, 1),
		ev(200, "b", KindRole, Follower, 2),
		ev(300, "c", KindRole, Leader, 2),
	})
	assert.Equal(t, []int{1}, f.TwoLeaderTerms)
	assert.Equal(t, map[int]string{1: "ab", 2: "c"}, leadersByTerm(f))
}

// A node that starts again without a logged stop crashed; events come
// sorted by time whatever their order in the input.
func TestInferredCrashAndOrder(t *testing.T) {
	f := Analyze([]Event{
		ev(500, "a", KindStart, "", 0),
		ev(0, "a", KindStart, "", 0),
		ev(100, "a", KindRole, Leader, 1),
		ev(700, "a", KindRole, Leader, 2),
	})
	require.Len(t, f.Faults, 2)
	assert.Equal(t, Fault{At: 500 * time.Millisecond, Node: "a", Kind: "crash", Inferred: true}, f.Faults[0])
	assert.Equal(t, "restart", f.Faults[1].Kind)
	require.Len(t, f.Leaders, 2)
	assert.Equal(t, Tenure{Term: 1, Node: "a", Start: 100 * time.Millisecond, End: 500 * time.Millisecond, EndedBy: "crash"}, f.Leaders[0])
	assert.Equal(t, []Window{
		{Start: 0, End: 100 * time.Millisecond, FromTerm: 0, ToTerm: 1}, // started, not yet led
		{Start: 500 * time.Millisecond, End: 700 * time.Millisecond, FromTerm: 1, ToTerm: 2},
	}, f.Leaderless)
}

func TestChurn(t *testing.T) {
	f := Analyze([]Event{
		ev(0, "a", KindRole, Candidate, 1),
		ev(250, "a", KindRole, Candidate, 2),
		ev(500, "a", KindRole, Leader, 3),
		ev(750, "b", KindRole, Candidate, 4),
		ev(1000, "b", KindRole, Candidate, 5),
	})
	assert.Equal(t, Churn{FirstTerm: 1, LastTerm: 5, TermsPerSecond: 4, LeaderlessTerms: []int{1, 2, 4, 5}, LongestLeaderlessRun: []int{1, 2}}, f.Churn)
	assert.Equal(t, []Window{
		{Start: 0, End: 500 * time.Millisecond, FromTerm: 1, ToTerm: 3},
		{Start: 750 * time.Millisecond, End: time.Second, FromTerm: 4, ToTerm: 5, Open: true},
	}, f.Leaderless)
}

func TestEmptyAnalysis(t *testing.T) {
	f := Analyze(nil)
	assert.Empty(t, f.Leaders)
	assert.Empty(t, f.Leaderless)
	assert.Equal(t, Churn{}, f.Churn)
}

func TestTermRanges(t *testing.T) {
	assert.Equal(t, "1-3, 5, 7-8", termRanges([]int{1, 2, 3, 5, 7, 8}))
	assert.Equal(t, "", termRanges(nil))
}
