package checker

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// The register split, fed op by op, keeps each key's operations in invoke
// order whatever order they completed in, drops failed ops and reads of
// unknown outcome, and sends ops of unknown outcome (info, or open at the
// end) to the end of the history.
func TestRegisterBuilderOrdersByInvoke(t *testing.T) {
	inv := func(i, time int64, p history.Process, f, v string) history.Op {
		return history.Op{Index: i, Time: time, Process: p, Type: history.Invoke, F: f, Key: "k", Value: []byte(v)}
	}
	done := func(i, time int64, p history.Process, typ history.Type, f, v string) history.Op {
		return history.Op{Index: i, Time: time, Process: p, Type: typ, F: f, Key: "k", Value: []byte(v), Node: "n1"}
	}
	h := history.History{
		inv(0, 10, 0, "write", "1"),
		inv(1, 11, 1, "cas", "[1,2]"),
		inv(2, 12, 2, "read", "null"),
		done(3, 13, 1, history.OK, "cas", "[1,2]"),
		inv(4, 14, 3, "write", "3"),
		done(5, 15, 2, history.Info, "read", "null"), // an info read constrains nothing
		done(6, 16, 0, history.Info, "write", "1"),
		inv(7, 17, 1, "read", "null"),
		done(8, 18, 1, history.OK, "read", "2"),
		inv(9, 19, 1, "write", "4"),
		done(10, 20, 1, history.Fail, "write", "4"),
		inv(11, 21, 1, "write", "5"), // open at the end
	}
	rh, err := splitRegister(h)
	require.NoError(t, err)
	ops := rh.keys["k"]
	var order []int64
	for _, op := range ops {
		order = append(order, op.index)
	}
	assert.Equal(t, []int64{0, 1, 4, 7, 11}, order)
	assert.Equal(t, int64(22), rh.infinity)
	assert.Equal(t, regOp{kind: regWrite, info: true, process: 0, index: 0, node: "n1", call: 10, ret: 22, deadline: 22, arg: 1}, ops[0])
	assert.Equal(t, regOp{kind: regCas, process: 1, index: 1, node: "n1", call: 11, ret: 13, deadline: 13, arg: 1, arg2: 2}, ops[1])
	assert.Equal(t, regOp{kind: regWrite, info: true, process: 3, index: 4, call: 14, ret: 22, deadline: 22, arg: 3}, ops[2], "open at the end")
	assert.Equal(t, regOp{kind: regRead, process: 1, index: 7, node: "n1", call: 17, ret: 18, deadline: 18, read: regValue{v: 2, present: true}}, ops[3])
	assert.Equal(t, 7, rh.operations)
	assert.Equal(t, 1, rh.failed)
	assert.Equal(t, 1, rh.infoReads)
}

// Reads that come before the first write or add are held until the
// workload is known and then checked like every other op: detecting the
// workload gives the report that naming it gives.
func TestChecksDetectingTheWorkloadMatchesNamingIt(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []string{"register", "set"} {
		files, err := os.ReadDir(filepath.Join("testdata", dir))
		require.NoError(t, err)
		for _, f := range files {
			name := filepath.Join(dir, f.Name())
			h := load(t, name)
			detected, err := CheckAll(ctx, h, Options{})
			require.NoError(t, err, name)
			named, err := CheckAll(ctx, h, Options{Workload: dir})
			require.NoError(t, err, name)
			assert.Equal(t, named.Valid, detected.Valid, name)
			assert.Equal(t, named.Ops, detected.Ops, name)
			for check, res := range named.Checks {
				assert.Equal(t, res.Valid, detected.Checks[check].Valid, name+" "+check)
			}
		}
	}

	readsFirst := history.History{
		{Index: 0, Time: 1, Process: 0, Type: history.Invoke, F: "read", Key: "k"},
		{Index: 1, Time: 2, Process: 0, Type: history.OK, F: "read", Key: "k", Value: []byte("7")},
		{Index: 2, Time: 3, Process: 0, Type: history.Invoke, F: "write", Key: "k", Value: []byte("7")},
		{Index: 3, Time: 4, Process: 0, Type: history.OK, F: "write", Key: "k", Value: []byte("7")},
	}
	r, err := CheckAll(ctx, readsFirst, Options{})
	require.NoError(t, err)
	assert.Equal(t, Invalid, r.Checks["linearizable"].Valid, "the held read of 7 before the write of 7 is checked")
	assert.Equal(t, Counts{Invoke: 2, OK: 2}, r.Ops)
}
