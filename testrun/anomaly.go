package testrun

import (
	"strconv"
	"time"

	"chaos/checker"
	"chaos/history"
	"chaos/raftcheck"
)

// firstAnomaly is when the first anomaly of an invalid check happened, in
// seconds of history time (from the start of the load), or nil when no
// check is invalid or none can say when. start is the wall time of the
// history's zero, for the raft check's wall-clock violations.
//
// What "when" means per check:
//   - linearizable: for each key that is not linearizable, the latest
//     completion among the operations its explanation names (the moment
//     the anomaly is complete); the earliest such key.
//   - set: the earliest completion of a lost acknowledged add.
//   - raft: the earliest violation.
//   - availability: the final heal plus the recovery bound, when the
//     cluster was due and had not recovered; for an election livelock,
//     the first event of its last leaderless term (by then the run met
//     the rule); for a cluster stuck leaderless, its start plus the
//     rule's bound.
func firstAnomaly(report checker.Report, h history.History, start time.Time) *float64 {
	var first *float64
	keep := func(s float64) {
		if first == nil || s < *first {
			first = &s
		}
	}
	completions := completionTimes(h)
	for _, c := range report.Checks {
		if c.Valid != checker.Invalid {
			continue
		}
		switch d := c.Details.(type) {
		case *checker.LinearizableDetails:
			for _, f := range d.Failures {
				if t, ok := latestCompletion(f.Ops, completions); ok {
					keep(t)
				}
			}
		case *checker.SetDetails:
			for _, t := range lostAddTimes(h, d.Lost) {
				keep(t)
			}
		case *raftcheck.RaftDetails:
			for _, v := range d.Violations {
				keep(v.Time.Sub(start).Seconds())
			}
		case *raftcheck.AvailabilityDetails:
			if d.FinalHeal != nil && !d.FinalHeal.Recovered {
				keep(time.Duration(d.FinalHeal.Time).Seconds() + d.RecoveryBound.Seconds())
			}
			if lv := d.Liveness; lv != nil {
				for _, l := range lv.Livelocks {
					keep(l.End.Sub(start).Seconds())
				}
				for _, s := range lv.Stuck {
					keep((time.Duration(s.Start) + lv.StuckBound).Seconds())
				}
			}
		}
	}
	return first
}

// completionTimes maps each invoke's history index to the time, in
// seconds, its operation completed (ok, fail or info); an operation still
// open at the end has none.
func completionTimes(h history.History) map[int64]float64 {
	open := map[history.Process]int64{}
	done := map[int64]float64{}
	for _, op := range h {
		if op.Type == history.Invoke {
			open[op.Process] = op.Index
			continue
		}
		if inv, ok := open[op.Process]; ok {
			done[inv] = time.Duration(op.Time).Seconds()
			delete(open, op.Process)
		}
	}
	return done
}

// latestCompletion is the latest completion among the invokes ops.
func latestCompletion(ops []int64, completions map[int64]float64) (float64, bool) {
	latest, found := 0.0, false
	for _, i := range ops {
		if t, ok := completions[i]; ok && (!found || t > latest) {
			latest, found = t, true
		}
	}
	return latest, found
}

// lostAddTimes are the completion times of the acknowledged adds of the
// lost elements.
func lostAddTimes(h history.History, lost []int64) []float64 {
	if len(lost) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, e := range lost {
		want[strconv.FormatInt(e, 10)] = true
	}
	var out []float64
	for _, op := range h {
		if op.Type == history.OK && op.F == history.FAdd && want[string(op.Value)] {
			out = append(out, time.Duration(op.Time).Seconds())
		}
	}
	return out
}

// opsPerSecond is the operations that completed ok per second of history:
// the load's throughput as clients saw it.
func opsPerSecond(report checker.Report, h history.History) float64 {
	if len(h) == 0 {
		return 0
	}
	span := time.Duration(h[len(h)-1].Time).Seconds()
	if span <= 0 {
		return 0
	}
	return float64(report.Ops.OK) / span
}
