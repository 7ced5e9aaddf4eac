package checker

import (
	"cmp"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// spec is one hand-written register operation on key "k": process p
// invoked f at call and completed at ret (in ms) with out (OK when zero;
// never when ret < 0). v is the write's value, the cas's [from,to], or what
// a read returned.
type spec struct {
	p         int
	f, v      string
	call, ret int64
	out       history.Type
}

func wr(p int, v string, call, ret int64) spec {
	return spec{p: p, f: history.FWrite, v: v, call: call, ret: ret}
}
func rd(p int, v string, call, ret int64) spec {
	return spec{p: p, f: history.FRead, v: v, call: call, ret: ret}
}
func cas(p int, v string, call, ret int64) spec {
	return spec{p: p, f: history.FCAS, v: v, call: call, ret: ret}
}
func info(s spec) spec    { s.out = history.Info; return s }
func failed(s spec) spec  { s.out = history.Fail; return s }
func (s spec) open() spec { s.ret = -1; return s }

// mkHistory turns specs into a history: invokes and completions ordered by
// time, invokes first at equal times (intervals are closed). It returns the
// history index of each spec's invoke.
func mkHistory(specs ...spec) (history.History, []int64) {
	type event struct {
		at       int64
		complete bool
		spec     int
	}
	var evs []event
	for i, s := range specs {
		evs = append(evs, event{s.call * int64(time.Millisecond), false, i})
		if s.ret >= 0 {
			evs = append(evs, event{s.ret * int64(time.Millisecond), true, i})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := cmp.Compare(a.at, b.at); c != 0 || a.complete == b.complete {
			return c
		}
		if a.complete {
			return 1
		}
		return -1
	})
	var h history.History
	index := make([]int64, len(specs))
	for _, e := range evs {
		s := specs[e.spec]
		op := history.Op{Index: int64(len(h)), Time: e.at, Process: history.Process(s.p), Type: history.Invoke, F: s.f, Key: "k"}
		if !e.complete {
			index[e.spec] = op.Index
			if s.f != history.FRead {
				op.Value = json.RawMessage(s.v)
			}
		} else {
			op.Type = cmp.Or(s.out, history.OK)
			if s.f != history.FRead || op.Type == history.OK {
				op.Value = json.RawMessage(s.v)
			}
		}
		h = append(h, op)
	}
	return h, index
}

// decide runs writeOrder on the history of specs, and porcupine's plain
// search, which must agree; it returns the witness and the index of each
// spec's invoke.
func decide(t *testing.T, specs ...spec) (*woWitness, []int64) {
	t.Helper()
	h, index := mkHistory(specs...)
	require.NoError(t, history.Validate(h))
	rh, err := splitRegister(h)
	require.NoError(t, err)
	plain := pointers(rh.keys["k"])
	want := porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(plain, false), 10*time.Second)
	prepared, _ := prepare(rh.keys["k"])
	wit, unique := writeOrder(prepared)
	require.True(t, unique)
	if want == porcupine.Ok {
		require.Nil(t, wit, "porcupine found it linearizable; the witness says %s", witnessText(wit))
		return nil, index
	}
	require.NotNil(t, wit, "porcupine found it not linearizable")
	core := wit.closure(prepared)
	require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(registerModel(), porcupineOps(core, false), 10*time.Second),
		"the witness's ops alone are not linearizable: %s", wit.proof().text)
	return wit, index
}

func pointers(ops []regOp) []*regOp {
	out := make([]*regOp, len(ops))
	for i := range ops {
		out[i] = &ops[i]
	}
	return out
}

func witnessText(w *woWitness) string {
	if w == nil {
		return ""
	}
	return w.proof().text
}

// named returns the history indexes of the ops the witness names.
func named(w *woWitness) []int64 {
	var ixs []int64
	for _, op := range w.proof().ops {
		if !slices.Contains(ixs, op.index) {
			ixs = append(ixs, op.index)
		}
	}
	return ixs
}

// Reads: each names the write of its value; two values whose stretches in
// the register must overlap cannot be ordered.
func TestWriteOrderReads(t *testing.T) {
	wit, _ := decide(t, wr(0, "1", 0, 10), rd(1, "1", 20, 30), wr(0, "2", 40, 50), rd(1, "2", 60, 70))
	assert.Nil(t, wit, "sequential")
	wit, _ = decide(t, wr(0, "1", 0, 30), wr(1, "2", 10, 40), rd(2, "2", 50, 60), rd(3, "1", 35, 70))
	assert.Nil(t, wit, "concurrent writes, reads that fit the order 2, 1... or 1, 2 with the read of 1 early")

	// Stale read: 2 certainly replaced 1 before the read of 1 began.
	wit, ix := decide(t, wr(0, "1", 0, 10), wr(1, "2", 20, 30), rd(2, "1", 40, 50))
	require.NotNil(t, wit)
	assert.Equal(t, woOverlap, wit.kind)
	assert.ElementsMatch(t, []int64{ix[0], ix[1], ix[2]}, named(wit))
	assert.Equal(t, "1 and 2 cannot be ordered: process 0's write 1 was acknowledged at 0.010 s and process 1's write 2 began at 0.020 s, "+
		"so 1 was written before 2; yet process 1's write 2 was acknowledged at 0.030 s and process 2's read of 1 began at 0.040 s, "+
		"so 2 was written before 1", wit.proof().text)

	// A value comes back: 1 was read after 2 was read after 1 was written.
	wit, _ = decide(t, wr(0, "1", 0, 10), wr(1, "2", 0, 10), rd(2, "2", 20, 30), rd(2, "1", 40, 50))
	require.NotNil(t, wit)
	assert.Equal(t, woOverlap, wit.kind)

	// A write nobody read lies inside the stretch another value must span.
	wit, _ = decide(t, wr(0, "1", 0, 10), wr(1, "2", 20, 30), rd(2, "1", 5, 50), rd(3, "1", 40, 45))
	require.NotNil(t, wit)
	assert.Equal(t, woOverlap, wit.kind)
}

// The initial value: reads of nothing come before every write.
func TestWriteOrderInitialValue(t *testing.T) {
	wit, _ := decide(t, rd(0, "null", 0, 10), wr(1, "1", 5, 20), rd(0, "null", 15, 25), rd(2, "1", 30, 40))
	assert.Nil(t, wit, "reads of nothing concurrent with the first write")
	wit, ix := decide(t, wr(1, "1", 0, 10), rd(0, "null", 20, 30))
	require.NotNil(t, wit)
	assert.Equal(t, woInitialAfterWrite, wit.kind)
	assert.ElementsMatch(t, []int64{ix[0], ix[1]}, named(wit))
	// The value that was in effect may be known from a read, not its write.
	wit, ix = decide(t, info(wr(1, "1", 0, 100)), rd(2, "1", 5, 10), rd(0, "null", 20, 30))
	require.NotNil(t, wit)
	assert.Equal(t, woInitialAfterWrite, wit.kind)
	assert.Equal(t, "process 0 read nothing at 0.020–0.030 s, but process 2 read 1 at 0.005–0.010 s, before that began, "+
		"and a key once written is never empty again", wit.proof().text)
	assert.ElementsMatch(t, []int64{ix[2], ix[1]}, named(wit))
}

// A value nobody wrote, or only a failed op wrote, cannot be observed.
func TestWriteOrderNeverWritten(t *testing.T) {
	for name, specs := range map[string][]spec{
		"read":         {rd(0, "7", 0, 10)},
		"failed write": {failed(wr(1, "7", 0, 5)), rd(0, "7", 10, 20)},
		"failed cas":   {wr(1, "1", 0, 5), failed(cas(1, "[1,7]", 6, 8)), rd(0, "7", 10, 20)},
		"cas":          {wr(1, "1", 0, 5), cas(0, "[3,7]", 10, 20)},
	} {
		t.Run(name, func(t *testing.T) {
			wit, ix := decide(t, specs...)
			require.NotNil(t, wit)
			assert.Equal(t, woNeverWritten, wit.kind)
			assert.Equal(t, []int64{ix[len(ix)-1]}, named(wit))
		})
	}
}

// A value observed before its only writer was invoked: an op of unknown
// outcome included.
func TestWriteOrderBeforeWrite(t *testing.T) {
	for name, writer := range map[string]spec{"acknowledged": wr(1, "5", 20, 30), "unknown outcome": info(wr(1, "5", 20, 30))} {
		t.Run(name, func(t *testing.T) {
			wit, ix := decide(t, rd(0, "5", 0, 10), writer)
			require.NotNil(t, wit)
			assert.Equal(t, woBeforeWrite, wit.kind)
			assert.ElementsMatch(t, []int64{ix[0], ix[1]}, named(wit))
			assert.Contains(t, wit.proof().text, "process 0 read 5 at 0.000–0.010 s, but process 1's write 5")
		})
	}
}

// Ops of unknown outcome took effect exactly when what they wrote was
// observed, through cas ops that took effect too.
func TestWriteOrderUnknownOutcomes(t *testing.T) {
	wit, _ := decide(t, wr(0, "1", 0, 5), info(wr(1, "2", 10, 20)), rd(2, "1", 100, 110))
	assert.Nil(t, wit, "never took effect")
	wit, _ = decide(t, wr(0, "1", 0, 5), info(wr(1, "2", 10, 20)), rd(2, "2", 100, 110))
	assert.Nil(t, wit, "took effect late, after its client gave up")
	wit, _ = decide(t, wr(0, "1", 0, 5), info(wr(1, "2", 10, 20)).open(), rd(2, "2", 100, 110))
	assert.Nil(t, wit, "open at the end, took effect")
	wit, _ = decide(t, wr(0, "1", 0, 5), info(cas(1, "[5,6]", 10, 20)), info(cas(2, "[6,5]", 10, 20)), info(cas(3, "[9,9]", 10, 20)),
		rd(4, "1", 100, 110))
	assert.Nil(t, wit, "cas ops of unknown outcome that expect each other's values, or their own, need not take effect")
	wit, _ = decide(t, wr(0, "1", 0, 5), info(cas(1, "[1,2]", 10, 20)), info(cas(2, "[2,3]", 10, 20)), rd(4, "3", 100, 110))
	assert.Nil(t, wit, "a chain of cas ops of unknown outcome took effect")

	// It appeared, then the older value came back.
	wit, _ = decide(t, wr(0, "1", 0, 5), info(wr(1, "2", 10, 20)), rd(2, "2", 100, 110), rd(2, "1", 120, 130))
	require.NotNil(t, wit)
	assert.Equal(t, woOverlap, wit.kind)
	// The chain took effect, so its first cas found 1, which a later read
	// still saw.
	wit, _ = decide(t, wr(0, "1", 0, 5), info(cas(1, "[1,2]", 10, 20)), info(cas(2, "[2,3]", 30, 40)), rd(4, "3", 50, 60),
		rd(3, "1", 70, 80))
	require.NotNil(t, wit)
	assert.Equal(t, woChainOrder, wit.kind)
	assert.Equal(t, "process 3's read of 1 began at 0.070 s, but process 1's cas 1→2 (outcome unknown) replaced 1 and led to 2, "+
		"and process 2's cas 2→3 (outcome unknown) had taken effect by 0.060 s (3 was observed by then), before that began", witnessText(wit))
}

// Cas ops chain values: each directly follows the value it expected.
func TestWriteOrderCasChains(t *testing.T) {
	wit, _ := decide(t, wr(0, "1", 0, 10), cas(1, "[1,2]", 20, 30), cas(2, "[2,3]", 40, 50), rd(3, "3", 60, 70))
	assert.Nil(t, wit)

	wit, ix := decide(t, wr(0, "1", 0, 10), cas(1, "[1,2]", 20, 100), cas(2, "[1,3]", 20, 100))
	require.NotNil(t, wit)
	assert.Equal(t, woTwoCas, wit.kind)
	assert.ElementsMatch(t, []int64{ix[0], ix[1], ix[2]}, named(wit))

	// The cas put 2 right after 1, yet 2 was read before a read of 1 began.
	wit, ix = decide(t, wr(0, "1", 0, 10), cas(1, "[1,2]", 20, 100), rd(2, "2", 30, 40), rd(3, "1", 50, 60))
	require.NotNil(t, wit)
	assert.Equal(t, woChainOrder, wit.kind)
	assert.ElementsMatch(t, []int64{ix[3], ix[2], ix[1]}, named(wit))
	assert.Equal(t, "process 3's read of 1 began at 0.050 s, but process 1's cas 1→2 replaced 1 and led to 2, "+
		"and process 2 read 2 at 0.030–0.040 s, before that began", wit.proof().text)

	wit, ix = decide(t, cas(0, "[1,2]", 0, 10), cas(1, "[2,1]", 0, 10))
	require.NotNil(t, wit)
	assert.Equal(t, woCasCycle, wit.kind)
	assert.ElementsMatch(t, []int64{ix[0], ix[1]}, named(wit))
}

// Keys some value of which was written twice are the search's.
func TestWriteOrderNeedsUniqueValues(t *testing.T) {
	h, _ := mkHistory(wr(0, "1", 0, 10), wr(1, "1", 20, 30), rd(2, "1", 40, 50))
	rh, err := splitRegister(h)
	require.NoError(t, err)
	_, unique := writeOrder(pointers(rh.keys["k"]))
	assert.False(t, unique)
}
