package campaign

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// script is a RunFunc that answers each test's runs with the verdicts
// given, in order, and counts the calls.
type script struct {
	verdicts map[string][]string
	calls    map[string]int
	// cancelAfter, when set, is called after that many runs in all.
	cancelAfter int
	cancel      context.CancelFunc
	total       int
}

func (s *script) run(_ context.Context, t Test, i int) Run {
	s.calls[t.Name]++
	s.total++
	if s.cancel != nil && s.total == s.cancelAfter {
		s.cancel()
	}
	return Run{Seed: uint64(100 + i), Verdict: s.verdicts[t.Name][i], Replay: t.Name + " seed " + string(rune('0'+i))}
}

func newScript(v map[string][]string) *script { return &script{verdicts: v, calls: map[string]int{}} }

func TestRunnerRunsEveryCountAndJudges(t *testing.T) {
	s := newScript(map[string][]string{
		"ok":  {Valid, Valid},
		"bug": {Valid, Invalid, Valid},
	})
	tests := []Test{{Name: "ok", Expect: ExpectValid, Count: 2}, {Name: "bug", Expect: ExpectInvalid, Count: 3}}
	res, interrupted := Runner{Run: s.run, Out: io.Discard}.Execute(context.Background(), tests)
	require.False(t, interrupted)
	require.Len(t, res, 2)
	assert.Equal(t, Pass, res[0].Outcome)
	assert.Equal(t, Pass, res[1].Outcome, "one invalid run of three finds the bug")
	assert.Equal(t, 3, s.calls["bug"], "a campaign runs every count, past the first invalid")
	assert.InDelta(t, 1.0/3, res[1].Stats.DetectionRate, 1e-9)
	assert.Equal(t, "bug seed 0", res[1].Replay, "the replay is the first run that did not find the bug")
	assert.Equal(t, 0, ExitCode(res, interrupted))
}

func TestRunnerStopsAtFirstInvalidWhenAsked(t *testing.T) {
	s := newScript(map[string][]string{"t": {Valid, Invalid, Valid, Valid}})
	res, _ := Runner{Run: s.run, Out: io.Discard, StopAtInvalid: true}.Execute(context.Background(),
		[]Test{{Name: "t", Expect: ExpectValid, Count: 4}})
	assert.Equal(t, 2, s.calls["t"])
	assert.Equal(t, Fail, res[0].Outcome)
	assert.Equal(t, "t seed 1", res[0].Replay, "the replay is the invalid run")
	assert.Equal(t, 1, ExitCode(res, false))
}

// An interrupt lets the run in flight end, runs nothing more, and marks
// the tests not begun as skipped; the campaign exits 255.
func TestRunnerInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newScript(map[string][]string{"a": {Valid, Valid}, "b": {Valid}, "c": {Valid}})
	s.cancelAfter, s.cancel = 1, cancel
	tests := []Test{{Name: "a", Expect: ExpectValid, Count: 2}, {Name: "b", Expect: ExpectValid, Count: 1},
		{Name: "c", Expect: ExpectValid, Count: 1}}
	res, interrupted := Runner{Run: s.run, Out: io.Discard}.Execute(ctx, tests)
	require.True(t, interrupted)
	require.Len(t, res, 3)
	assert.Len(t, res[0].Runs, 1, "the second count of a never starts")
	assert.Contains(t, res[0].Skipped, "interrupted after 1 of 2 runs")
	assert.Empty(t, res[1].Runs)
	assert.NotEmpty(t, res[1].Skipped)
	assert.NotEmpty(t, res[2].Skipped)
	assert.Equal(t, 1, s.total)
	assert.Equal(t, 255, ExitCode(res, interrupted))
}
