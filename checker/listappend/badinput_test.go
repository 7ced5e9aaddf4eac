package listappend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input is reported as anomalies, never a panic, and the rest of the
// history is still checked.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		h    []Txn
		want string
	}{
		{"unknown function", hist(ok(MicroOp{F: "cas", Key: "x"})), MalformedOp},
		{"read with a value", hist(ok(MicroOp{F: FRead, Key: "x", Value: 3, Known: true})), MalformedOp},
		{"append with a list", hist(ok(MicroOp{F: FAppend, Key: "x", Value: 1, List: []int64{1}})), MalformedOp},
		{"unknown read with a list", hist(ok(MicroOp{F: FRead, Key: "x", List: []int64{1}})), MalformedOp},
		{"no outcome", hist(Txn{Ops: []MicroOp{ap("x", 1)}}), MalformedTxn},
		{"completes before invoked", hist(at(ok(ap("x", 1)), 50, 10)), MalformedTxn},
		{"value appended twice", hist(ok(ap("x", 1)), ok(ap("x", 1)), ok(rd("x", 1))), DuplicateAppend},
		{"value appended twice by one txn", hist(ok(ap("x", 1), ap("x", 1)), ok(rd("x", 1, 1))), DuplicateAppend},
		{"value nobody appended", hist(ok(ap("x", 1)), ok(rd("x", 1, 7))), PhantomValue},
		{"phantom in a stray read", hist(ok(ap("x", 1)), ok(rd("x", 1, 2)), ok(rd("x", 9))), PhantomValue},
		{"nil ops and keys", hist(ok(), ok(MicroOp{}), ok(rd(""))), MalformedOp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range []Model{StrictSerializable, ReadCommitted} {
				res := check(t, c.h, m)
				require.Contains(t, res.AnomalyTypes, c.want, explainAll(res))
				require.Equal(t, Invalid, res.Valid)
				for _, a := range res.Anomalies {
					require.NotEmpty(t, a.Explain())
				}
			}
		})
	}
}

// A malformed op is ignored, so the valid rest still yields a verdict on
// what it shows: here a G1c next to a malformed op.
func TestMalformedOpIgnored(t *testing.T) {
	res := check(t, hist(
		ok(ap("x", 1), rd("y", 1), MicroOp{F: "nope"}),
		ok(ap("y", 1), rd("x", 1)),
	), Serializable)
	require.Equal(t, []string{G1c, MalformedOp}, res.AnomalyTypes)
}
