package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
)

// TestSetWorkloadWithFinalRead runs the set workload against flaky clients,
// then a final read through three healthy ones, and checks the history.
func TestSetWorkloadWithFinalRead(t *testing.T) {
	const workers = 6
	store := newMemStore()
	gen := NewSet()
	rec := newTestRecorder(t)
	r := newTestRunner(t, Config{Clients: flakyClients(store, workers, 3, 8, 0.1, 0.1),
		Generator: gen, Recorder: rec, MaxOps: 1000, Seed: 8})
	_, err := r.Run(t.Context())
	require.NoError(t, err)
	loadOps := len(rec.Ops())
	last := nextProcess(rec.Ops())
	require.Greater(t, last, workers, "some processes were retired")

	readers := flakyClients(store, 3, 3, 9, 0, 0)
	require.NoError(t, FinalSetRead(t.Context(), readers, gen.Attempted(), rec))

	h := rec.Ops()
	require.NoError(t, history.Validate(h))
	require.Len(t, h, loadOps+6, "three final reads")
	var processes []int
	for _, op := range h[loadOps:] {
		assert.Equal(t, history.FRead, op.F)
		assert.Empty(t, op.Key)
		processes = append(processes, int(op.Process))
		if op.Type != history.Invoke {
			assert.Equal(t, history.OK, op.Type)
			assert.NotEmpty(t, op.Node)
		}
	}
	assert.ElementsMatch(t, []int{last, last, last + 1, last + 1, last + 2, last + 2}, processes,
		"each read on a new process after those of the load")

	report := checkAll(t, h)
	assert.Equal(t, checker.Valid, report.Valid, "%+v", report.Checks)
	d := report.Checks["set"].Details.(*checker.SetDetails)
	assert.Empty(t, d.Lost)
	assert.Positive(t, d.Acknowledged)
}

func TestFinalSetReadRecordsAFailedRead(t *testing.T) {
	rec := newTestRecorder(t)
	failing := flakyClients(newMemStore(), 1, 1, 1, 1, 0) // pFail = 1
	require.NoError(t, FinalSetRead(t.Context(), failing, []int64{1, 2}, rec))
	h := rec.Ops()
	require.Len(t, h, 2)
	assert.Equal(t, history.Process(0), h[0].Process, "an empty history's first process")
	assert.Equal(t, history.Fail, h[1].Type)

	assert.ErrorContains(t, FinalSetRead(t.Context(), nil, nil, rec), "no clients")
	require.NoError(t, rec.Close())
	assert.ErrorIs(t, FinalSetRead(t.Context(), failing, nil, rec), history.ErrClosed)
}

// nextProcess returns a client process number above every one in h.
func nextProcess(h history.History) int {
	next := 0
	for i := range h {
		if p := h[i].Process; !p.IsNemesis() && int(p) >= next {
			next = int(p) + 1
		}
	}
	return next
}
