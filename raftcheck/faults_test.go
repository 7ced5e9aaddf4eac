package raftcheck

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"chaos/checker"
	"chaos/history"
)

// timeline builds a history from lines "<seconds> <f> [<value>]": "ok" is
// a client write that completed ok then, any other f a nemesis op with the
// value given (default null).
func timeline(lines ...string) history.History {
	var h history.History
	add := func(op history.Op) {
		op.Index = int64(len(h))
		h = append(h, op)
	}
	for _, l := range lines {
		fields := strings.SplitN(l, " ", 3)
		secs, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			panic(err)
		}
		f, value := fields[1], ""
		if len(fields) == 3 {
			value = fields[2]
		}
		t := int64(secs * float64(time.Second))
		if f == "ok" {
			add(history.Op{Time: t, Process: 0, Type: history.Invoke, F: history.FWrite})
			add(history.Op{Time: t, Process: 0, Type: history.OK, F: history.FWrite})
			continue
		}
		op := history.Op{Time: t, Process: history.NemesisProcess, Type: history.Info, F: f}
		if value != "" {
			op.Value = []byte(value)
		}
		add(op)
	}
	return h
}

// The final heal is when the last active fault ended: a pause that
// outlives the kill stopped after it is judged from its resume, and the
// final stops of a run from the last of them.
func TestAvailabilityFinalHealIsWhenTheLastFaultEnded(t *testing.T) {
	cases := map[string]struct {
		h     history.History
		index int64 // of the final heal
		valid checker.Validity
	}{
		"overlapping faults": {timeline("0 ok", "1 kill", "2 pause", "3 start", "8.5 ok", "9 resume", "10 ok", "20 heal", "21 ok"),
			7, checker.Valid},
		"final stops one after the other": {timeline("0 ok", "1 kill", "2 pause", "10 resume", "16 start", "17 ok", "18 heal", "30 ok"),
			5, checker.Valid},
		"a stop that failed ends at the heal": {timeline("0 ok", "1 kill", `10 stop-kill {"error":"kill: n4: not up","op":"start"}`,
			"10.5 ok", "11 heal", "12 ok", "20 ok"), 6, checker.Valid},
		"a start that did nothing is no fault": {timeline("0 ok", "1 kill", "2 start", `3 start-pause {"error":"n1: exited 1"}`, "4 ok",
			"20 heal"), 3, checker.Valid},
		"a start that did something is one": {timeline("0 ok", "1 kill", "2 start", `3 start-kill {"error":"n1: exited 1","op":"kill"}`,
			"4 start", "12 ok", "20 heal"), 5, checker.Invalid},
	}
	for name, c := range cases {
		r := Availability(nil, c.h, AvailabilityOptions{RecoveryBound: 5 * time.Second})
		d := availDetails(t, r)
		if d.FinalHeal == nil || d.FinalHeal.Index != c.index || r.Valid != c.valid {
			t.Errorf("%s: final heal %+v, valid %v (%s); want index %d, %v", name, d.FinalHeal, r.Valid, d.Reason, c.index, c.valid)
		}
	}
}

// A fault whose stop failed and that no heal followed was never healed.
func TestAvailabilityFailedStopWithoutHealIsUnknown(t *testing.T) {
	h := timeline("0 ok", "1 kill", `10 stop-kill {"error":"kill: n4: not up","op":"start"}`, "30 ok")
	r := Availability(nil, h, AvailabilityOptions{})
	if d := availDetails(t, r); r.Valid != checker.Unknown || d.FinalHeal != nil {
		t.Errorf("valid %v, final heal %+v, reason %q", r.Valid, d.FinalHeal, d.Reason)
	}
}
