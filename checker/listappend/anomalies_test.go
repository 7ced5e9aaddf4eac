package listappend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each test is the smallest history showing one anomaly, checked under
// strict serializability (which forbids all of them).

func TestG0WriteCycle(t *testing.T) {
	res := check(t, hist(
		ok(ap("x", 1), ap("y", 1)),
		ok(ap("x", 2), ap("y", 2)),
		ok(rd("x", 1, 2), rd("y", 2, 1)),
	), StrictSerializable)
	requireOnly(t, res, G0)
	a := res.Anomalies[0]
	require.Equal(t, []int{0, 1}, a.Txns)
	require.Equal(t, []EdgeKind{WW, WW}, kinds(a))
	require.Contains(t, a.Explain(), "T1 appended 2 to x right after T0's append of 1 (ww), so T0 < T1.")
	require.Contains(t, a.Explain(), "So T0 < T1 < T0: a cycle, which is G0")
}

func TestG1cCircularInformationFlow(t *testing.T) {
	res := check(t, hist(
		ok(ap("x", 1), rd("y", 1)),
		ok(ap("y", 1), rd("x", 1)),
	), StrictSerializable)
	requireOnly(t, res, G1c)
	require.Equal(t, []EdgeKind{WR, WR}, kinds(res.Anomalies[0]))
}

func TestGSingleReadSkew(t *testing.T) {
	res := check(t, hist(
		ok(ap("x", 1), ap("y", 1)),
		ok(rd("x", 1), rd("y")),
		ok(rd("y", 1)),
	), StrictSerializable)
	requireOnly(t, res, GSingle)
	a := res.Anomalies[0]
	require.Equal(t, []int{0, 1}, a.Txns)
	require.ElementsMatch(t, []EdgeKind{WR, RW}, kinds(a))
	require.Contains(t, a.Explain(), "T1 read y as empty, before T0's append of 1, the first version of y (rw), so T1 < T0.")
}

func TestGNonadjacent(t *testing.T) {
	// T0 -rw(a)-> T1 -wr(b)-> T2 -rw(c)-> T3 -wr(d)-> T0.
	res := check(t, nonadjacent(), StrictSerializable)
	requireOnly(t, res, GNonadjacent)
	require.Equal(t, []EdgeKind{RW, WR, RW, WR}, kinds(res.Anomalies[0]))
}

// nonadjacent is a cycle with two rw edges that do not follow one another.
func nonadjacent() []Txn {
	return hist(
		ok(rd("a"), rd("d", 1)),
		ok(ap("a", 1), ap("b", 1)),
		ok(rd("b", 1), rd("c")),
		ok(ap("c", 1), ap("d", 1)),
		ok(rd("a", 1), rd("c", 1)),
	)
}

func TestG2ItemWriteSkew(t *testing.T) {
	res := check(t, writeSkew(), StrictSerializable)
	requireOnly(t, res, G2Item)
	require.Equal(t, []EdgeKind{RW, RW}, kinds(res.Anomalies[0]))
}

// writeSkew is the classic write skew: each of T0 and T1 reads both keys
// empty and appends to one; T2 sees both appends.
func writeSkew() []Txn {
	return hist(
		ok(rd("x"), rd("y"), ap("x", 1)),
		ok(rd("x"), rd("y"), ap("y", 1)),
		ok(rd("x", 1), rd("y", 1)),
	)
}

func TestG1aAbortedRead(t *testing.T) {
	res := check(t, hist(fail(ap("x", 1)), ok(rd("x", 1))), StrictSerializable)
	requireOnly(t, res, G1a)
	require.Equal(t, []int{1, 0}, res.Anomalies[0].Txns)
}

func TestG1bIntermediateRead(t *testing.T) {
	res := check(t, hist(ok(ap("x", 1), ap("x", 2)), ok(rd("x", 1)), ok(rd("x", 1, 2))), StrictSerializable)
	// T1 saw T0's state between its appends; as a cycle that is also
	// T0 -wr-> T1 -rw-> T0, a G-single.
	requireOnly(t, res, GSingle, G1b)
	require.Equal(t, []int{1, 0}, anomaly(t, res, G1b).Txns)
}

func TestIncompatibleOrder(t *testing.T) {
	res := check(t, hist(ok(ap("x", 1)), ok(ap("x", 2)), ok(rd("x", 1, 2)), ok(rd("x", 2, 1))), StrictSerializable)
	requireOnly(t, res, IncompatibleOrder)
	require.Equal(t, []int{3, 2}, res.Anomalies[0].Txns)
}

func TestDuplicateElements(t *testing.T) {
	res := check(t, hist(ok(ap("x", 1)), ok(rd("x", 1, 1))), StrictSerializable)
	requireOnly(t, res, DuplicateElements)
}

func TestInternal(t *testing.T) {
	for name, h := range map[string][]Txn{
		"own append missing":   hist(ok(ap("x", 1), rd("x"))),
		"reads differ":         hist(ok(ap("x", 1)), ok(rd("x"), rd("x", 1))),
		"read after read+app":  hist(ok(ap("x", 1)), ok(rd("x", 1), ap("x", 2), rd("x", 2))),
		"sees a future append": hist(ok(rd("x", 1), ap("x", 1))),
	} {
		t.Run(name, func(t *testing.T) {
			res := check(t, h, Serializable)
			require.Contains(t, res.AnomalyTypes, Internal, explainAll(res))
			require.Equal(t, Invalid, res.Valid)
		})
	}
}

func TestFracturedAppend(t *testing.T) {
	res := check(t, hist(ok(ap("x", 1), ap("x", 2)), ok(rd("x", 2))), StrictSerializable)
	require.Contains(t, res.AnomalyTypes, FracturedAppend, explainAll(res))
	require.Equal(t, Invalid, res.Valid)
}

func TestRealtimeCycle(t *testing.T) {
	res := check(t, staleRead(), StrictSerializable)
	requireOnly(t, res, GSingle+RealtimeSuffix)
	a := res.Anomalies[0]
	require.Equal(t, []EdgeKind{Realtime, RW}, kinds(a))
	require.Contains(t, a.Explain(), "T0 completed at 10 ns, before T1 was invoked at 20 ns (realtime), so T0 < T1.")
}

// staleRead has T1 read x empty after T0's append of 1 completed: fine
// for serializability, not for strict serializability.
func staleRead() []Txn {
	return hist(at(ok(ap("x", 1)), 1, 10), at(ok(rd("x")), 20, 30), at(ok(rd("x", 1)), 1, 40))
}

func TestProcessCycle(t *testing.T) {
	h := hist(ok(ap("x", 1)), ok(rd("x")), ok(rd("x", 1)))
	h[1].Process = h[0].Process
	h[1].Invoke = 1 // runs after T0 on its process
	require.Equal(t, Valid, check(t, h, Serializable).Valid)
	res, err := Check(h, Options{Model: Serializable, ProcessOrder: true})
	require.NoError(t, err)
	requireOnly(t, res, GSingle+ProcessSuffix)
	res = check(t, h, StrongSessionSerializable)
	requireOnly(t, res, GSingle+ProcessSuffix)
}

func TestValidHistories(t *testing.T) {
	for name, h := range map[string][]Txn{
		"empty":       nil,
		"serial":      hist(ok(ap("x", 1)), ok(rd("x", 1), ap("x", 2)), ok(rd("x", 1, 2))),
		"empty reads": hist(ok(rd("x"), rd("y")), ok(ap("x", 1)), ok(rd("x", 1), rd("y"))),
		"own appends": hist(ok(rd("x"), ap("x", 1), ap("x", 2), rd("x", 1, 2)), ok(rd("x", 1, 2))),
		"failed unseen": hist(
			fail(ap("x", 1)), ok(ap("x", 2)), ok(rd("x", 2)),
		),
		"info seen": hist(info(ap("x", 1), ap("y", 1)), ok(rd("x", 1)), ok(rd("x", 1), ap("x", 2)), ok(rd("x", 1, 2))),
		"info unseen": hist(
			info(ap("x", 1)), ok(ap("x", 2)), ok(rd("x", 2)),
		),
		"info and fail reads ignored": hist(info(rd("x", 9)), fail(rd("x", 8)), ok(rd("x"))),
		"unread appends":              hist(ok(ap("x", 1)), ok(ap("x", 2)), ok(rd("x", 1))),
	} {
		t.Run(name, func(t *testing.T) {
			for _, m := range []Model{StrictSerializable, Serializable, SnapshotIsolation, ReadCommitted} {
				requireValid(t, check(t, h, m))
			}
		})
	}
}

func TestGeneratedIsValid(t *testing.T) {
	h := Generate(7, 5000, 20, 8)
	require.Len(t, h, 5000)
	res := check(t, h, StrictSerializable)
	requireValid(t, res)
	require.Greater(t, res.Edges, 5000)
	require.Equal(t, h, Generate(7, 5000, 20, 8), "Generate is deterministic")
}

func TestPlantedAnomaliesAreFound(t *testing.T) {
	base := Generate(3, 2000, 10, 16)
	for _, name := range PlantableAnomalies() {
		t.Run(name, func(t *testing.T) {
			h, err := Plant(base, name, 11)
			require.NoError(t, err)
			res := check(t, h, StrictSerializable)
			want := []string{name}
			if name == G1b {
				want = []string{GSingle, G1b}
			}
			requireOnly(t, res, want...)
		})
	}
	_, err := Plant(base, "G-nope", 1)
	require.Error(t, err)
}

func TestDeterministic(t *testing.T) {
	h := Generate(5, 3000, 10, 8)
	for _, name := range PlantableAnomalies() {
		var err error
		h, err = Plant(h, name, 2)
		require.NoError(t, err)
	}
	a, b := check(t, h, StrictSerializable), check(t, h, StrictSerializable)
	require.Equal(t, a, b)
	require.Len(t, a.Anomalies, 7)
}

func TestSearchBoundMakesUnknown(t *testing.T) {
	res, err := Check(writeSkew(), Options{Model: Serializable, MaxSearchSteps: 1})
	require.NoError(t, err)
	require.Equal(t, Unknown, res.Valid)
	require.NotEmpty(t, res.Undecided)
	// Still invalid when a forbidden anomaly was found elsewhere.
	h := append(writeSkew(), Txn{Index: 3, Type: Fail, Ops: []MicroOp{ap("z", 1)}}, Txn{Index: 4, Type: OK, Ops: []MicroOp{rd("z", 1)}})
	res, err = Check(h, Options{Model: Serializable, MaxSearchSteps: 1})
	require.NoError(t, err)
	require.Equal(t, Invalid, res.Valid)
}

// kinds returns the kinds of a cycle's steps.
func kinds(a Anomaly) []EdgeKind {
	var ks []EdgeKind
	for _, s := range a.Steps {
		ks = append(ks, s.Kind)
	}
	return ks
}

// anomaly returns the first anomaly of res named name.
func anomaly(t *testing.T, res Result, name string) Anomaly {
	t.Helper()
	for _, a := range res.Anomalies {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no %s in %s", name, explainAll(res))
	return Anomaly{}
}
