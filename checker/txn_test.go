package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// txnHistory builds a list-append history from lines "P invoke|ok|fail|info
// VALUE", timed 1 ms apart.
func txnHistory(t *testing.T, lines ...string) history.History {
	t.Helper()
	var h history.History
	for i, l := range lines {
		f := strings.SplitN(l, " ", 3)
		require.Len(t, f, 3, l)
		typ, err := history.ParseType(f[1])
		require.NoError(t, err)
		var p history.Process
		require.NoError(t, p.UnmarshalJSON([]byte(f[0])))
		h = append(h, history.Op{Index: int64(i), Time: int64(i+1) * 1e6, Process: p, Type: typ, F: history.FTxn, Value: []byte(f[2])})
	}
	return h
}

// writeSkew: two transactions each read both keys empty and append to a
// different one. Serializable forbids it (G2-item), snapshot isolation
// allows it.
func writeSkew(t *testing.T) history.History {
	return txnHistory(t,
		`0 invoke [["r","x",null],["r","y",null],["append","x",1]]`,
		`1 invoke [["r","x",null],["r","y",null],["append","y",2]]`,
		`0 ok [["r","x",[]],["r","y",[]],["append","x",1]]`,
		`1 ok [["r","x",[]],["r","y",[]],["append","y",2]]`,
		`2 invoke [["r","x",null],["r","y",null]]`,
		`2 ok [["r","x",[1]],["r","y",[2]]]`,
	)
}

func TestListAppendValidHistory(t *testing.T) {
	h := txnHistory(t,
		`0 invoke [["append","x",1],["r","x",null]]`,
		`0 ok [["append","x",1],["r","x",[1]]]`,
		`1 invoke [["append","x",2]]`,
		`1 info [["append","x",2]]`,
		`2 invoke [["append","y",3]]`,
		`2 fail [["append","y",3]]`,
		`0 invoke [["r","x",null],["r","y",null]]`,
		`0 ok [["r","x",[1,2]],["r","y",null]]`,
	)
	res, err := ListAppend(h, "")
	require.NoError(t, err)
	assert.Equal(t, Valid, res.Valid)
	d := res.Details.(*ListAppendDetails)
	assert.Equal(t, "strict-serializable", d.Model)
	assert.Equal(t, 4, d.Txns)
	assert.Empty(t, d.AnomalyTypes)
	assert.Equal(t, []string{"4 transactions checked under strict-serializable; anomalies: none"}, d.Findings())
}

// The models decide: write skew is invalid under serializable, valid under
// snapshot isolation, where it is listed as allowed.
func TestListAppendWriteSkewByModel(t *testing.T) {
	res, err := ListAppend(writeSkew(t), "serializable")
	require.NoError(t, err)
	assert.Equal(t, Invalid, res.Valid)
	d := res.Details.(*ListAppendDetails)
	require.Equal(t, []string{"G2-item"}, d.AnomalyTypes)
	assert.Equal(t, []int64{0, 1}, d.Anomalies[0].Ops, "the invocations of the cycle's transactions")
	assert.True(t, d.Anomalies[0].Forbidden)
	assert.Contains(t, d.Findings()[1], "G2-item (forbidden): ")

	res, err = ListAppend(writeSkew(t), "snapshot-isolation")
	require.NoError(t, err)
	assert.Equal(t, Valid, res.Valid)
	d = res.Details.(*ListAppendDetails)
	require.Len(t, d.Anomalies, 1)
	assert.False(t, d.Anomalies[0].Forbidden)
	assert.Contains(t, d.Findings()[1], "G2-item (allowed by snapshot-isolation): ")

	_, err = ListAppend(writeSkew(t), "linearizable")
	assert.Error(t, err)
}

// What does not decode is an anomaly, never an error or a panic; a read
// of a value no append wrote, and an aborted read, are named.
func TestListAppendBadInputIsAnomalies(t *testing.T) {
	h := txnHistory(t,
		`0 invoke [["append","x",1],["inc","x",1],"oops",["r",7,null]]`,
		`0 ok [["append","x",1],["inc","x",1],"oops",["r",7,null]]`,
		`1 invoke {"not":"a list"}`,
		`1 ok {"not":"a list"}`,
		`2 invoke [["append","y",5]]`,
		`2 fail [["append","y",5]]`,
		`3 invoke [["r","x",null],["r","y",null]]`,
		`3 ok [["r","x",[1,9]],["r","y",[5]]]`,
	)
	res, err := ListAppend(h, "")
	require.NoError(t, err)
	assert.Equal(t, Invalid, res.Valid)
	types := res.Details.(*ListAppendDetails).AnomalyTypes
	for _, want := range []string{"malformed-op", "phantom-value", "G1a"} {
		assert.Contains(t, types, want)
	}
}

// CheckAll tells list-append from its txn ops and refuses a history that
// mixes it with another workload.
func TestCheckAllDetectsListAppend(t *testing.T) {
	r, err := CheckAll(context.Background(), writeSkew(t), Options{})
	require.NoError(t, err)
	assert.Equal(t, Invalid, r.Valid)
	assert.Contains(t, r.Checks, "list-append")
	assert.Contains(t, r.Checks, "stats")

	r, err = CheckAll(context.Background(), writeSkew(t), Options{ConsistencyModel: "snapshot-isolation"})
	require.NoError(t, err)
	assert.Equal(t, Valid, r.Valid)

	mixed := append(writeSkew(t), history.Op{Index: 6, Time: 9e6, Process: 5, Type: history.Invoke, F: history.FWrite, Key: "k", Value: []byte("1")})
	_, err = CheckAll(context.Background(), mixed, Options{})
	assert.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, `mixes workloads: op 0 is a list-append "txn", op 6 a register "write"`)
}
