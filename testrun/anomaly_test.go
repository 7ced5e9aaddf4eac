package testrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
	"chaos/raftcheck"
)

func op(i int64, at time.Duration, p history.Process, typ history.Type, f, value string) history.Op {
	o := history.Op{Index: i, Time: int64(at), Process: p, Type: typ, F: f}
	if value != "" {
		o.Value = []byte(value)
	}
	return o
}

func TestFirstAnomalyPerCheck(t *testing.T) {
	s := time.Second
	h := history.History{
		op(0, 1*s, 0, history.Invoke, history.FWrite, "1"),
		op(1, 2*s, 1, history.Invoke, history.FRead, ""),
		op(2, 3*s, 0, history.OK, history.FWrite, "1"),
		op(3, 4*s, 1, history.OK, history.FRead, "0"),
		op(4, 5*s, 2, history.Invoke, history.FAdd, "7"),
		op(5, 6*s, 2, history.OK, history.FAdd, "7"),
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	report := func(name string, r checker.Result) checker.Report {
		return checker.Report{Checks: map[string]checker.Result{name: r, "stats": {Valid: checker.Valid}}}
	}
	cases := []struct {
		name   string
		report checker.Report
		want   *float64
	}{
		{"valid", report("linearizable", checker.Result{Valid: checker.Valid}), nil},
		{"linearizable: the latest completion the explanation names",
			report("linearizable", checker.Result{Valid: checker.Invalid, Details: &checker.LinearizableDetails{
				Failures: []checker.KeyFailure{{Key: "k1", Ops: []int64{0, 1}}}}}), ptr(4.0)},
		{"set: the lost add's acknowledgement",
			report("set", checker.Result{Valid: checker.Invalid, Details: &checker.SetDetails{Lost: []int64{7}}}), ptr(6.0)},
		{"raft: the earliest violation, from wall time",
			report("raft", checker.Result{Valid: checker.Invalid, Details: &raftcheck.RaftDetails{Violations: []raftcheck.Violation{
				{Time: start.Add(9 * s)}, {Time: start.Add(2500 * time.Millisecond)}}}}), ptr(2.5)},
		{"availability: the final heal plus the bound",
			report("availability", checker.Result{Valid: checker.Invalid, Details: &raftcheck.AvailabilityDetails{
				FinalHeal: &raftcheck.Recovery{Time: int64(20 * s)}, RecoveryBound: 5 * s}}), ptr(25.0)},
		{"availability: a recovered cluster's final heal is no anomaly; a livelock's last term is",
			report("availability", checker.Result{Valid: checker.Invalid, Details: &raftcheck.AvailabilityDetails{
				FinalHeal: &raftcheck.Recovery{Time: int64(20 * s), Recovered: true}, RecoveryBound: 5 * s,
				Liveness: &raftcheck.LivenessDetails{Livelocks: []raftcheck.Livelock{
					{Start: start.Add(11 * s), End: start.Add(14 * s)}}}}}), ptr(14.0)},
		{"availability: a stuck cluster, once over the bound",
			report("availability", checker.Result{Valid: checker.Invalid, Details: &raftcheck.AvailabilityDetails{
				Liveness: &raftcheck.LivenessDetails{StuckBound: 10 * s, Stuck: []raftcheck.Stuck{
					{Start: int64(3 * s), End: int64(16 * s)}}}}}), ptr(13.0)},
		{"unknown is no anomaly",
			report("linearizable", checker.Result{Valid: checker.Unknown, Details: &checker.LinearizableDetails{
				Failures: []checker.KeyFailure{{Key: "k1", Ops: []int64{0}}}}}), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := firstAnomaly(tc.report, h, start)
			if tc.want == nil {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.InDelta(t, *tc.want, *got, 1e-9)
		})
	}
}

func TestOpsPerSecond(t *testing.T) {
	h := history.History{op(0, 0, 0, history.Invoke, history.FRead, ""), op(1, 4*time.Second, 0, history.OK, history.FRead, "0")}
	assert.InDelta(t, 0.25, opsPerSecond(checker.Report{Ops: checker.Counts{OK: 1}}, h), 1e-9)
	assert.Zero(t, opsPerSecond(checker.Report{}, nil))
}

func ptr(f float64) *float64 { return &f }
