package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"chaos/history"
)

func TestStats(t *testing.T) {
	res := Stats(load(t, "register/valid-cas-chain.jsonl"))
	d := res.Details.(*StatsDetails)
	assert.Equal(t, Valid, res.Valid)
	assert.Equal(t, Counts{Invoke: 7, OK: 5, Fail: 2}, d.Counts)
	assert.Equal(t, map[string]Counts{
		"write": {Invoke: 1, OK: 1},
		"cas":   {Invoke: 4, OK: 2, Fail: 2},
		"read":  {Invoke: 2, OK: 2},
	}, d.ByF)
	assert.Empty(t, d.NeverSucceeded)

	// valid-info-cas has no successful cas.
	res = Stats(load(t, "register/valid-info-cas.jsonl"))
	d = res.Details.(*StatsDetails)
	assert.Equal(t, Invalid, res.Valid)
	assert.Equal(t, []string{"cas"}, d.NeverSucceeded)
}

func TestStatsCountsOpenOpsAsInfoAndNemesisApart(t *testing.T) {
	res := Stats(load(t, "register/valid-sequential.jsonl"))
	d := res.Details.(*StatsDetails)
	assert.Equal(t, 2, d.Nemesis)
	assert.Equal(t, Counts{Invoke: 4, OK: 4}, d.Counts)

	res = Stats(load(t, "register/valid-open-at-end.jsonl"))
	d = res.Details.(*StatsDetails)
	assert.Equal(t, 1, d.Open)
	assert.Equal(t, Counts{Invoke: 3, OK: 2, Info: 1}, d.Counts)
	assert.Equal(t, d.Counts, OpCounts(load(t, "register/valid-open-at-end.jsonl")))
}

func TestStatsWithoutOperationsIsUnknown(t *testing.T) {
	h := history.History{{Index: 0, Time: 1, Process: history.NemesisProcess, Type: history.Info, F: "kill"}}
	res := Stats(h)
	assert.Equal(t, Unknown, res.Valid)
	assert.Equal(t, "no client operations", res.Details.(*StatsDetails).Reason)
}
