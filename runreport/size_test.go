package runreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/foreignlog"
	"chaos/history"
	"chaos/testrun/runrecord"
)

// longRun is a generated run of secs seconds at rate operations per second
// over three functions, most ok, some fail, a few info, with a fault of
// each family every ten seconds and a leader change with each; the
// randomness is seeded, so the run is the same every time.
func longRun(secs, rate int) Run {
	rng := rand.New(rand.NewPCG(1, 2))
	var h history.History
	fs := []string{history.FRead, history.FWrite, history.FCAS}
	n := secs * rate
	for i := range n {
		start := int64(i) * int64(time.Second) / int64(rate)
		lat := int64(float64(time.Millisecond) * (0.5 + rng.ExpFloat64()*5))
		typ := history.OK
		switch r := rng.Float64(); {
		case r < 0.02:
			typ, lat = history.Info, int64(time.Second)
		case r < 0.15:
			typ = history.Fail
		}
		p := history.Process(i)
		f := fs[rng.IntN(len(fs))]
		h = append(h, history.Op{Time: start, Process: p, Type: history.Invoke, F: f, Key: "k1"},
			history.Op{Time: start + lat, Process: p, Type: typ, F: f, Key: "k1"})
	}
	families := [][2]string{
		{history.FKill, history.FStart}, {history.FStartPartition, history.FStopPartition},
		{history.FPause, history.FResume}, {history.FClockBump, history.FClockReset},
		{history.FStartPacket, history.FStopPacket},
	}
	for s := 5; s+5 < secs; s += 10 {
		fam := families[(s/10)%len(families)]
		h = append(h, nem(0, float64(s), fam[0], `{"nodes":["n1","n3"],"n1":["n2"],"n2":["n1"]}`),
			nem(0, float64(s+4), fam[1], `{"nodes":["n1","n3"]}`))
	}
	h = append(h, nem(0, float64(secs-5), history.FHeal, `{"faults":["kill"]}`))
	slices.SortStableFunc(h, func(a, b history.Op) int { return int(a.Time - b.Time) })
	for i := range h {
		h[i].Index = int64(i)
	}
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var roles []foreignlog.Event
	for s := 0; s < secs; s += 10 {
		for i, node := range []string{"n1", "n2", "n3", "n4", "n5"} {
			role := foreignlog.Follower
			if i == (s/10)%5 {
				role = foreignlog.Leader
			}
			roles = append(roles, foreignlog.Event{Time: start.Add(time.Duration(s) * time.Second), Node: node,
				Kind: foreignlog.KindRole, Role: role, Term: s/10 + 1})
		}
	}
	avail, _ := json.Marshal(map[string]any{"valid": true, "leaderless": []any{}, "unavailable": []any{},
		"recoveries": []map[string]any{{"index": 5, "f": "start", "time": 9e9, "recovered": true, "after_ns": 3e6}}})
	return Run{Dir: "/store/long/20261124T120000.000Z", Roles: roles,
		Results: runrecord.Results{RunSummary: runrecord.RunSummary{Name: "long", Seed: 1, LoadStarted: start.Format(time.RFC3339Nano),
			Leaders: []runrecord.LeaderChange{{TimeS: 1, Leader: "n1"}}},
			Valid: checker.Valid, Checks: map[string]json.RawMessage{"availability": avail}},
		Files: []File{{Path: "history.jsonl", Size: 30 << 20}}}.WithHistory(h)
}

// A minute at 1,500 operations per second makes a report under 2 MB: the
// ok points are thinned to a sample, every fail and info point is kept,
// and the page says so.
func TestReportSizeBoundForALongHistory(t *testing.T) {
	r := longRun(60, 1500)
	var b bytes.Buffer
	require.NoError(t, Render(&b, r))
	page := b.String()
	t.Logf("report of 90,000 operations over 60 s: %d bytes", b.Len())
	assert.Less(t, b.Len(), 2<<20, "report.html of a 60 s run must stay under 2 MB")

	p, err := build(r)
	require.NoError(t, err)
	th := p.Thinning
	assert.True(t, th.Thinned())
	assert.Equal(t, 90_000, th.OK+th.FailInfo)
	assert.Equal(t, 4, th.OKStride)
	assert.Equal(t, (th.OK+3)/4, th.OKDrawn, "every 4th ok operation")
	assert.Equal(t, 1, th.FailInfoStride)
	assert.Equal(t, th.FailInfo, th.FailInfoDrawn)
	assert.Contains(t, page, fmt.Sprintf("Thinned to keep the page small: every 4th ok operation (%d of %d) and all %d fail or info operations are drawn",
		th.OKDrawn, th.OK, th.FailInfo))
}

// The latency chart's points are bounded, not by the operations: ten
// times the operations over the same minute make a page less than twice
// as large, and under 1 MB.
func TestReportSizeGrowsSlowerThanTheHistory(t *testing.T) {
	size := func(rate int) int {
		var b bytes.Buffer
		require.NoError(t, Render(&b, longRun(60, rate)))
		return b.Len()
	}
	small, large := size(500), size(5000)
	t.Logf("30,000 operations: %d bytes; 300,000: %d bytes", small, large)
	assert.Less(t, large, 2*small)
	assert.Less(t, large, 1<<20)
}

// Below the threshold nothing is thinned, and the page says every
// operation is drawn.
func TestReportDrawsEveryOperationOfAShortRun(t *testing.T) {
	r := longRun(10, 100)
	var b bytes.Buffer
	require.NoError(t, Render(&b, r))
	assert.Contains(t, b.String(), "Every operation is drawn (")
}
