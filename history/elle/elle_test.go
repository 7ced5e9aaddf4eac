package elle

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"olympos.io/encoding/edn"

	"chaos/history"
)

func TestWriteIsJepsensHistory(t *testing.T) {
	h := history.History{
		{Index: 0, Time: 1000, Process: 0, Type: history.Invoke, F: history.FTxn, Value: []byte(`[["append","x",1],["r","y",null]]`)},
		{Index: 1, Time: 1500, Process: history.NemesisProcess, Type: history.Info, F: history.FKill, Value: []byte(`{"nodes":["n1"]}`)},
		{Index: 2, Time: 2000, Process: 0, Type: history.OK, F: history.FTxn, Value: []byte(`[["append","x",1],["r","y",[3,4]]]`)},
		{Index: 3, Time: 2500, Process: 7, Type: history.Invoke, F: history.FTxn, Value: []byte(`[["r","x",null]]`)},
		{Index: 4, Time: 3000, Process: 7, Type: history.Info, F: history.FTxn, Value: []byte(`[["r","x",null]]`)},
	}
	var b bytes.Buffer
	require.NoError(t, Write(&b, h))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 4, "the nemesis's op left out:\n%s", b.String())
	assert.Equal(t, `{:index 2 :time 2000 :process 0 :type :ok :f :txn :value[[:append"x"1][:r"y"[3 4]]]}`, lines[1])

	// An EDN reader gets Jepsen's shapes back: keywords, strings, numbers.
	var got map[edn.Keyword]any
	require.NoError(t, edn.UnmarshalString(lines[1], &got))
	assert.Equal(t, edn.Keyword("ok"), got[edn.Keyword("type")])
	assert.Equal(t, edn.Keyword("txn"), got[edn.Keyword("f")])
	mops := got[edn.Keyword("value")].([]any)
	assert.Equal(t, []any{edn.Keyword("append"), "x", int64(1)}, mops[0])
	assert.Equal(t, []any{edn.Keyword("r"), "y", []any{int64(3), int64(4)}}, mops[1])
	require.NoError(t, edn.UnmarshalString(lines[0], &got))
	assert.Nil(t, got[edn.Keyword("value")].([]any)[1].([]any)[2], "a read not yet done is nil")
}

func TestWriteRefusesWhatIsNoTransaction(t *testing.T) {
	for value, want := range map[string]string{
		`{"x":1}`:             "op 0: value is not a list of [f, key, value] micro-operations",
		`[["append","x"]]`:    "op 0: micro-operation 0 is not [f, key, value]",
		`[["r","x",["a"]]]`:   "op 0: micro-operation 0: list element a is not an integer",
		`[["append",1,2]]`:    "op 0: micro-operation 0 is not [f, key, value]",
		`[["append","x",{}]]`: "op 0: micro-operation 0: value {} is neither an integer",
	} {
		h := history.History{{Index: 0, Process: 0, Type: history.Invoke, F: history.FTxn, Value: []byte(value)}}
		assert.ErrorContains(t, Write(&bytes.Buffer{}, h), want, value)
	}
}
