package history

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ops builds a history from (process, type, f) triples, numbering indexes
// and times in order.
func ops(steps ...any) History {
	var h History
	for i := 0; i+2 < len(steps); i += 3 {
		h = append(h, Op{Index: int64(len(h)), Time: int64(10 * len(h)),
			Process: steps[i].(Process), Type: steps[i+1].(Type), F: steps[i+2].(string)})
	}
	return h
}

func TestValidateAcceptsGoodHistories(t *testing.T) {
	good := map[string]History{
		"invoke ok":        ops(Process(0), Invoke, "read", Process(0), OK, "read"),
		"interleaved":      ops(Process(0), Invoke, "read", Process(1), Invoke, "write", Process(0), Fail, "read", Process(1), OK, "write"),
		"retired, renamed": ops(Process(0), Invoke, "write", Process(0), Info, "write", Process(2), Invoke, "read"),
		"open at the end":  ops(Process(0), Invoke, "write"),
		"nemesis":          ops(NemesisProcess, Info, "kill", Process(0), Invoke, "read", NemesisProcess, Info, "start"),
		"same time":        {{Index: 0, Time: 5, Type: Invoke, F: "read"}, {Index: 1, Time: 5, Type: OK, F: "read"}},
	}
	for name, h := range good {
		assert.NoError(t, Validate(h), name)
	}
}

func TestValidateRejectsBadHistories(t *testing.T) {
	bad := []struct {
		name string
		h    History
		want string
	}{
		{"two open ops", ops(Process(3), Invoke, "read", Process(3), Invoke, "write"),
			`op 1: invalid history: process 3 invokes "write" while its op 0 ("read") is still open`},
		{"completion without invoke", ops(Process(0), OK, "read"),
			`op 0: invalid history: ok "read" for process 0, which has no open invoke`},
		{"two completions", ops(Process(0), Invoke, "read", Process(0), OK, "read", Process(0), Fail, "read"),
			`op 2: invalid history: fail "read" for process 0, which has no open invoke`},
		{"retired process invokes", ops(Process(1), Invoke, "cas", Process(1), Info, "cas", Process(1), Invoke, "read"),
			`op 2: invalid history: process 1 invokes "read" but was retired by the info at index 1`},
		{"f mismatch", ops(Process(0), Invoke, "read", Process(0), OK, "write"),
			`has f "write" but its invoke at index 0 has f "read"`},
		{"nemesis invoke", ops(NemesisProcess, Invoke, "kill"), `nemesis op "kill" has type invoke, want info`},
		{"empty f", ops(Process(0), Invoke, ""), "f is empty"},
		{"index gap", History{{Index: 1, Type: Invoke, F: "read"}}, "index 1, want 0"},
		{"time backwards", History{{Index: 0, Time: 9, Type: Invoke, F: "read"}, {Index: 1, Time: 8, Type: OK, F: "read"}},
			"time 8 is before the previous op's time 9"},
		{"negative time", History{{Index: 0, Time: -1, Type: Invoke, F: "read"}}, "time -1 is negative"},
		{"no type", History{{Index: 0, F: "read"}}, "type Type(0) is not invoke"},
		{"bad process", History{{Index: 0, Process: -7, Type: Invoke, F: "read"}}, "process -7 is not a valid process"},
	}
	for _, c := range bad {
		err := Validate(c.h)
		require.Error(t, err, c.name)
		assert.ErrorIs(t, err, ErrInvalid, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

func TestValidateKeyMismatch(t *testing.T) {
	h := History{
		{Index: 0, Type: Invoke, F: "write", Key: "a"},
		{Index: 1, Type: OK, F: "write", Key: "b"},
	}
	assert.ErrorContains(t, Validate(h), `has key "b" but its invoke at index 0 has key "a"`)
	h[1].Key = "" // a completion may leave the key out
	assert.NoError(t, Validate(h))
}

func TestValidatorLeavesStateOnError(t *testing.T) {
	var v Validator
	require.NoError(t, v.Add(&Op{Index: 0, Type: Invoke, F: "read"}))
	require.Error(t, v.Add(&Op{Index: 1, Type: Invoke, F: "read"}))
	assert.Equal(t, 1, v.Open())
	require.NoError(t, v.Add(&Op{Index: 1, Type: OK, F: "read"}))
	assert.Equal(t, 0, v.Open())
}

func TestPairs(t *testing.T) {
	h := ops(Process(0), Invoke, "write", NemesisProcess, Info, "kill", Process(1), Invoke, "read",
		Process(0), Info, "write", Process(1), OK, "read", Process(2), Invoke, "read")
	require.NoError(t, Validate(h))
	pairs := h.Pairs()
	assert.Equal(t, []Pair{{0, 3}, {2, 4}, {5, -1}}, pairs)
	assert.Equal(t, Info, h.Outcome(pairs[0]))
	assert.Equal(t, OK, h.Outcome(pairs[1]))
	assert.Equal(t, Info, h.Outcome(pairs[2]), "an open op's outcome is unknown")
	assert.True(t, pairs[2].Open())
	assert.Len(t, h.Nemesis(), 1)
}
