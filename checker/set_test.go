package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

func checkSet(t *testing.T, h history.History) (Validity, *SetDetails) {
	t.Helper()
	res, err := Set(h)
	require.NoError(t, err)
	return res.Valid, res.Details.(*SetDetails)
}

func TestSetFixtures(t *testing.T) {
	cases := []struct {
		file                                    string
		valid                                   Validity
		lost, unexpected, recovered, duplicates []int64
		attempts, acknowledged, inFlight        int
	}{
		{file: "valid.jsonl", valid: Valid, attempts: 4, acknowledged: 2},
		{file: "lost.jsonl", valid: Invalid, lost: []int64{2}, attempts: 2, acknowledged: 2},
		{file: "unexpected.jsonl", valid: Invalid, unexpected: []int64{3, 7}, attempts: 2, acknowledged: 1},
		{file: "recovered.jsonl", valid: Valid, recovered: []int64{2, 6}, attempts: 3, acknowledged: 1},
		{file: "no-final-read.jsonl", valid: Unknown, attempts: 1, acknowledged: 1},
		{file: "in-flight.jsonl", valid: Valid, attempts: 2, acknowledged: 2, inFlight: 1},
		{file: "duplicates.jsonl", valid: Invalid, duplicates: []int64{1}, attempts: 1, acknowledged: 1},
	}
	orEmpty := func(l []int64) []int64 {
		if l == nil {
			return []int64{}
		}
		return l
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			valid, d := checkSet(t, load(t, "set/"+c.file))
			assert.Equal(t, c.valid, valid)
			assert.Equal(t, orEmpty(c.lost), d.Lost)
			assert.Equal(t, orEmpty(c.unexpected), d.Unexpected)
			assert.Equal(t, orEmpty(c.recovered), d.Recovered)
			assert.Equal(t, orEmpty(c.duplicates), d.Duplicates)
			assert.Equal(t, c.attempts, d.Attempts)
			assert.Equal(t, c.acknowledged, d.Acknowledged)
			assert.Equal(t, c.inFlight, d.InFlight)
			if c.valid == Unknown {
				assert.Equal(t, "no successful final read", d.Reason)
				assert.Nil(t, d.FinalRead)
			} else {
				require.NotNil(t, d.FinalRead)
			}
		})
	}
}

func TestSetElementAddedAfterTheReadIsUnexpected(t *testing.T) {
	h := history.History{
		{Index: 0, Time: 10, Type: history.Invoke, F: "read"},
		{Index: 1, Time: 20, Type: history.OK, F: "read", Value: []byte("[4]")},
		{Index: 2, Time: 30, Type: history.Invoke, F: "add", Value: []byte("4")},
		{Index: 3, Time: 40, Type: history.OK, F: "add", Value: []byte("4")},
	}
	valid, d := checkSet(t, h)
	assert.Equal(t, Invalid, valid)
	assert.Equal(t, []int64{4}, d.Unexpected)
	assert.Empty(t, d.Lost, "an add after the final read cannot be lost from it")
}

func TestSetRejectsMalformedOps(t *testing.T) {
	for _, c := range []struct {
		invoke, complete history.Op
		want             string
	}{
		{history.Op{F: "add", Value: []byte(`"x"`)}, history.Op{F: "add"}, `add value "x", want an integer`},
		{history.Op{F: "read"}, history.Op{F: "read", Value: []byte(`{"a":1}`)}, "want a list of integers"},
		{history.Op{F: "read"}, history.Op{F: "read", Value: []byte(`null`)}, "want a list of integers"},
		{history.Op{F: "remove", Value: []byte("1")}, history.Op{F: "remove"}, `f "remove" is not a set operation`},
		{history.Op{F: "add", Key: "a", Value: []byte("1")}, history.Op{F: "add", Key: "b"}, ""},
	} {
		inv, done := c.invoke, c.complete
		inv.Index, inv.Type, inv.Time = 0, history.Invoke, 1
		done.Index, done.Type, done.Time = 1, history.OK, 2
		h := history.History{inv, done}
		if c.want == "" { // two keys: the completion's key mismatch is the history's problem, so use two ops
			h = history.History{inv, {Index: 1, Time: 2, Type: history.OK, F: "add"},
				{Index: 2, Time: 3, Process: 1, Type: history.Invoke, F: "add", Key: "b", Value: []byte("2")}}
			c.want = `key "b", but earlier set ops use key "a"`
		}
		_, err := Set(h)
		assert.ErrorIs(t, err, ErrMalformed, c.want)
		assert.ErrorContains(t, err, c.want)
	}
}
