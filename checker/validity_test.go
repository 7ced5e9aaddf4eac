package checker

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMerge(t *testing.T) {
	cases := []struct {
		in   []Validity
		want Validity
	}{
		{nil, Unknown},
		{[]Validity{Valid}, Valid},
		{[]Validity{Valid, Valid}, Valid},
		{[]Validity{Valid, Unknown}, Unknown},
		{[]Validity{Unknown, Valid}, Unknown},
		{[]Validity{Valid, Unknown, Invalid}, Invalid},
		{[]Validity{Invalid, Unknown}, Invalid},
		{[]Validity{Validity(42), Valid}, Unknown},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Merge(c.in...), "%v", c.in)
	}
}

func TestValidityJSON(t *testing.T) {
	for v, text := range map[Validity]string{Valid: "true", Invalid: "false", Unknown: `"unknown"`, Validity(9): `"unknown"`} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, text, string(b))
	}
	for text, v := range map[string]Validity{"true": Valid, "false": Invalid, `"unknown"`: Unknown} {
		var got Validity
		require.NoError(t, json.Unmarshal([]byte(text), &got))
		assert.Equal(t, v, got)
	}
	var got Validity
	assert.Error(t, json.Unmarshal([]byte(`"yes"`), &got))
	assert.Equal(t, Unknown, Validity(0), "the zero verdict is never valid")
}

func TestResultFlattensDetails(t *testing.T) {
	b, err := json.Marshal(Result{Valid: Valid, Details: &StatsDetails{Nemesis: 2}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"valid":true,"counts":{"invoke":0,"ok":0,"fail":0,"info":0},"by_f":null,"open":0,"nemesis":2}`, string(b))

	b, err = json.Marshal(Result{Valid: Unknown})
	require.NoError(t, err)
	assert.Equal(t, `{"valid":"unknown"}`, string(b))

	b, err = json.Marshal(Result{Valid: Invalid, Details: struct{}{}})
	require.NoError(t, err)
	assert.Equal(t, `{"valid":false}`, string(b))

	_, err = json.Marshal(Result{Valid: Valid, Details: []int{1}})
	assert.ErrorContains(t, err, "want a JSON object")
}
