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
	return firstAnomalyIn(report, scanOps(h), start)
}

// opScan gives every op of a history to fn, in order, until fn errs.
type opScan func(fn func(*history.Op) error) error

// scanOps is the scan of h.
func scanOps(h history.History) opScan {
	return func(fn func(*history.Op) error) error {
		for i := range h {
			if err := fn(&h[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// firstAnomalyIn is firstAnomaly on the history that scan reads, which it
// reads only when an invalid client check names its ops, once, keeping
// only the times of those.
func firstAnomalyIn(report checker.Report, scan opScan, start time.Time) *float64 {
	var first *float64
	keep := func(s float64) {
		if first == nil || s < *first {
			first = &s
		}
	}
	for _, c := range report.Checks {
		if c.Valid != checker.Invalid {
			continue
		}
		switch d := c.Details.(type) {
		case *checker.LinearizableDetails:
			completions := completionTimes(scan, d.Failures)
			for _, f := range d.Failures {
				if t, ok := latestCompletion(f.Ops, completions); ok {
					keep(t)
				}
			}
		case *checker.SetDetails:
			for _, t := range lostAddTimes(scan, d.Lost) {
				keep(t)
			}
		case *raftcheck.RaftDetails:
			for _, v := range d.Violations {
				keep(v.Time.Sub(start).Seconds())
			}
		case *raftcheck.AvailabilityDetails:
			availabilityAnomalies(d, start, keep)
		}
	}
	return first
}

// availabilityAnomalies gives keep the times of the availability check's
// anomalies (see firstAnomaly).
func availabilityAnomalies(d *raftcheck.AvailabilityDetails, start time.Time, keep func(float64)) {
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

// completionTimes maps the history index of each invoke the failures
// name to the time, in seconds, its operation completed (ok, fail or
// info); an operation still open at the end has none. It reads the
// history only when some failure names an op.
func completionTimes(scan opScan, failures []checker.KeyFailure) map[int64]float64 {
	wanted := map[int64]bool{}
	for _, f := range failures {
		for _, i := range f.Ops {
			wanted[i] = true
		}
	}
	done := map[int64]float64{}
	if len(wanted) == 0 {
		return done
	}
	open := map[history.Process]int64{} // process -> its open invoke, when wanted
	_ = scan(func(op *history.Op) error {
		if op.Type == history.Invoke {
			if wanted[op.Index] {
				open[op.Process] = op.Index
			}
			return nil
		}
		if inv, ok := open[op.Process]; ok {
			done[inv] = time.Duration(op.Time).Seconds()
			delete(open, op.Process)
		}
		return nil
	})
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
func lostAddTimes(scan opScan, lost []int64) []float64 {
	if len(lost) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, e := range lost {
		want[strconv.FormatInt(e, 10)] = true
	}
	var out []float64
	_ = scan(func(op *history.Op) error {
		if op.Type == history.OK && op.F == history.FAdd && want[string(op.Value)] {
			out = append(out, time.Duration(op.Time).Seconds())
		}
		return nil
	})
	return out
}

// opsPerSecond is the operations that completed ok per second of history:
// the load's throughput as clients saw it.
func opsPerSecond(report checker.Report, h history.History) float64 {
	if len(h) == 0 {
		return 0
	}
	return okRate(report, h[len(h)-1].Time)
}

// okRate is opsPerSecond of a history whose last op is at end.
func okRate(report checker.Report, end int64) float64 {
	span := time.Duration(end).Seconds()
	if span <= 0 {
		return 0
	}
	return float64(report.Ops.OK) / span
}
