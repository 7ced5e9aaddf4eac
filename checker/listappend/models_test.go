package listappend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The same history, judged by models of decreasing strength.
func TestModels(t *testing.T) {
	cases := []struct {
		name    string
		h       []Txn
		verdict map[Model]Verdict
	}{
		{"stale read (G-single-realtime)", staleRead(), map[Model]Verdict{
			StrictSerializable: Invalid, Serializable: Valid, SnapshotIsolation: Valid, ReadCommitted: Valid}},
		{"write skew (G2-item)", writeSkew(), map[Model]Verdict{
			StrictSerializable: Invalid, Serializable: Invalid, SnapshotIsolation: Valid, ReadCommitted: Valid}},
		{"nonadjacent rw (G-nonadjacent)", nonadjacent(), map[Model]Verdict{
			Serializable: Invalid, SnapshotIsolation: Invalid, ReadCommitted: Valid}},
		{"read skew (G-single)", hist(ok(ap("x", 1), ap("y", 1)), ok(rd("x", 1), rd("y")), ok(rd("y", 1))), map[Model]Verdict{
			Serializable: Invalid, SnapshotIsolation: Invalid, ReadCommitted: Valid}},
		{"circular flow (G1c)", hist(ok(ap("x", 1), rd("y", 1)), ok(ap("y", 1), rd("x", 1))), map[Model]Verdict{
			SnapshotIsolation: Invalid, ReadCommitted: Invalid}},
		{"aborted read (G1a)", hist(fail(ap("x", 1)), ok(rd("x", 1))), map[Model]Verdict{ReadCommitted: Invalid}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for m, want := range c.verdict {
				res := check(t, c.h, m)
				require.Equal(t, want, res.Valid, "%s: %s", m, explainAll(res))
			}
		})
	}
}

func TestForbids(t *testing.T) {
	all := []Model{StrictSerializable, Serializable, StrongSessionSerializable, SnapshotIsolation, ReadCommitted}
	for _, m := range all {
		for _, name := range []string{G0, G1a, G1b, G1c, G0 + ProcessSuffix, IncompatibleOrder, DuplicateAppend, Internal, "something-new"} {
			require.True(t, Forbids(m, name), "%s %s", m, name)
		}
	}
	require.True(t, Forbids(StrictSerializable, G2Item+RealtimeSuffix))
	require.False(t, Forbids(Serializable, G0+RealtimeSuffix))
	require.True(t, Forbids(SnapshotIsolation, GSingle))
	require.True(t, Forbids(SnapshotIsolation, GNonadjacent+ProcessSuffix))
	require.False(t, Forbids(SnapshotIsolation, G2Item))
	require.False(t, Forbids(SnapshotIsolation, G2Item+ProcessSuffix))
	require.False(t, Forbids(ReadCommitted, GSingle))
	require.True(t, Forbids(StrongSessionSerializable, G2Item+ProcessSuffix))
}

func TestUnknownModel(t *testing.T) {
	_, err := Check(nil, Options{Model: "linearizable"})
	require.ErrorContains(t, err, "unknown model")
	res, err := Check(nil, Options{})
	require.NoError(t, err)
	require.Equal(t, StrictSerializable, res.Model)
	require.Equal(t, Valid, res.Valid)
}
