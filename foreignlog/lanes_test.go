package foreignlog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lanes give each node a span per role and term, down between a stop and
// the next start, a new span at a restart nobody logged a crash before,
// all moved by shift and ended at the end of the log.
func TestLanes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	r := NewReport(Log{Format: "chaos", Events: []Event{
		{Time: at(0), Node: "n1", Kind: KindRole, Role: Follower, Term: 1},
		{Time: at(0), Node: "n2", Kind: KindRole, Role: Follower, Term: 1},
		{Time: at(2), Node: "n1", Kind: KindRole, Role: Leader, Term: 2},
		{Time: at(3), Node: "n2", Kind: KindStop},
		{Time: at(5), Node: "n2", Kind: KindStart},
		{Time: at(6), Node: "n1", Kind: KindStart},
		{Time: at(8), Node: "n2", Kind: KindRole, Role: Follower, Term: 2},
	}})
	rows := Lanes(r, 10*time.Second)
	require.Len(t, rows, 2)
	type span struct {
		from, to int
		label    string
		fill     string
	}
	get := func(i int) []span {
		var out []span
		for _, s := range rows[i].Spans {
			out = append(out, span{int(s.From / time.Second), int(s.To / time.Second), s.Label, s.Fill})
		}
		return out
	}
	assert.Equal(t, "n1", rows[0].Name)
	assert.Equal(t, []span{{10, 12, "follower t1", StateFill[StateFollower]}, {12, 16, "LEADER t2", StateFill[StateLeader]},
		{16, 18, "restart", StateFill[StateFollower]}}, get(0))
	assert.Equal(t, []span{{10, 13, "follower t1", StateFill[StateFollower]}, {13, 15, "down", StateFill[StateDown]},
		{15, 18, "start", StateFill[StateFollower]}, {18, 18, "follower t2", StateFill[StateFollower]}}, get(1))
	assert.Equal(t, "n1 LEADER t2 from 12.000 s to 16.000 s", rows[0].Spans[1].Title)
}
