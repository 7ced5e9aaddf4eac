package runreport

import (
	"encoding/json"
	"fmt"
	"time"

	"chaos/internal/svgplot"
	"chaos/raftcheck"
	"chaos/testrun/runrecord"
)

// Colours of the availability rows.
const (
	unavailableFill = "#ef9a9a"
	leaderlessFill  = "#ffe08a"
	recoveredFill   = "#a5d6a7"
	stuckFill       = "#e57373"
	leaderFill      = "#9be39b"
	noLeaderFill    = "#eeeeee"
)

// availabilityOf decodes the availability check's details; nil without
// one, or when they do not decode (the checks table says why: see checks).
func availabilityOf(checks map[string]json.RawMessage) *raftcheck.AvailabilityDetails {
	raw, ok := checks["availability"]
	if !ok {
		return nil
	}
	d, err := detailsOf("availability", raw)
	if err != nil {
		return nil
	}
	return d.(*raftcheck.AvailabilityDetails)
}

// availabilityRows are the availability chart's rows, in history time:
// windows without a successful operation, leaderless windows (measured on
// the nodes' clocks, placed on the history's by loadStart, the wall time
// of its zero), the recovery after each heal, and the leader the
// controller saw when it polled.
func availabilityRows(d *raftcheck.AvailabilityDetails, loadStart time.Time, leaders []runrecord.LeaderChange, end time.Duration) []svgplot.Row {
	var rows []svgplot.Row
	if d != nil {
		none := svgplot.Row{Name: "no ok operation", Class: "unavailable"}
		for _, w := range d.Unavailable {
			none.Spans = append(none.Spans, svgplot.Span{From: time.Duration(w.Start), To: time.Duration(w.End),
				Label: seconds(w.Duration), Fill: unavailableFill,
				Title: fmt.Sprintf("no operation succeeded for %s, from %s to %s", seconds(w.Duration), at(time.Duration(w.Start)), at(time.Duration(w.End)))})
		}
		leaderless := svgplot.Row{Name: "leaderless", Class: "leaderless"}
		for _, w := range d.Leaderless {
			from, to := w.Start.Sub(loadStart), w.End.Sub(loadStart)
			leaderless.Spans = append(leaderless.Spans, svgplot.Span{From: from, To: to, Label: seconds(w.Duration),
				Fill: leaderlessFill, Title: fmt.Sprintf("no node led the newest term for %s, from %s to %s", seconds(w.Duration), at(from), at(to))})
		}
		rows = append(rows, none, leaderless, recoveryRow(d.Recoveries, end))
	}
	return append(rows, leaderRow(leaders, end))
}

// recoveryRow spans each heal to the first successful operation after it.
func recoveryRow(rs []raftcheck.Recovery, end time.Duration) svgplot.Row {
	row := svgplot.Row{Name: "recovery after heal", Class: "recovery"}
	for _, r := range rs {
		s := svgplot.Span{From: time.Duration(r.Time), Fill: recoveredFill}
		if r.Recovered {
			s.To, s.Label = s.From+r.After, seconds(r.After)
			s.Title = fmt.Sprintf("first ok operation %s after %s at %s", seconds(r.After), r.F, at(s.From))
		} else {
			s.To, s.Label, s.Fill = end, "not recovered", stuckFill
			s.Title = fmt.Sprintf("no ok operation after %s at %s", r.F, at(s.From))
		}
		row.Spans = append(row.Spans, s)
	}
	return row
}

// leaderRow spans who the controller saw leading, polled once a second.
func leaderRow(ls []runrecord.LeaderChange, end time.Duration) svgplot.Row {
	row := svgplot.Row{Name: "leader (polled)", Class: "polled-leader"}
	for i, l := range ls {
		from, to := time.Duration(l.TimeS*float64(time.Second)), end
		if i+1 < len(ls) {
			to = time.Duration(ls[i+1].TimeS * float64(time.Second))
		}
		fill := leaderFill
		if l.Leader == "none" {
			fill = noLeaderFill
		}
		row.Spans = append(row.Spans, svgplot.Span{From: from, To: to, Label: l.Leader, Fill: fill,
			Title: fmt.Sprintf("the controller saw %s leading from %s", l.Leader, at(from))})
	}
	return row
}

// seconds writes a duration for a person: "850 ms", "2.3 s", "1.4 ms".
func seconds(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", ms(d))
	}
	return fmt.Sprintf("%.1f ms", ms(d))
}

// at writes a history time: "12.345 s".
func at(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// recoveryAfter words, by the history index of each op that ends faults,
// how long after it the first operation succeeded.
func recoveryAfter(d *raftcheck.AvailabilityDetails) map[int64]string {
	out := map[int64]string{}
	if d == nil {
		return out
	}
	for _, r := range d.Recoveries {
		out[r.Index] = "none"
		if r.Recovered {
			out[r.Index] = seconds(r.After)
		}
	}
	return out
}
