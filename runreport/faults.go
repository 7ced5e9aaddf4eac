package runreport

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"chaos/history"
	"chaos/history/faultrec"
)

// Fault is one fault as the report shows it: from the nemesis op that
// began it to the one that ended it, with its targets in words.
type Fault struct {
	Family string // kill, pause, partition, clock, packet, heal, or a targeted family
	// Start and End are history times; End is the end of the history for
	// a fault never ended (Open). An instant (a heal, a failed start, an
	// op chaos does not pair) has End == Start.
	Start, End time.Duration
	Open       bool
	Instant    bool
	// StartIndex and EndIndex are the history indexes of the ops that
	// began and ended it; EndIndex is -1 when nothing ended it.
	StartIndex, EndIndex int64
	EndF                 string
	Targets              string   // in words: "n1, n3 killed"
	Nodes                []string // the processes killed or paused; empty for other families
	Mechanism            string
	Effect               string
	Error                string // why the fault (or its end) failed
}

// IsHeal reports whether f is a heal (of the schedule's end, of a run's
// setup) rather than a fault.
func (f Fault) IsHeal() bool { return f.Family == history.FHeal }

// family is the family of a nemesis op f: a family of the fault records'
// table (faultrec.OpFamily) by its ops, any other start-X and stop-X as
// X, anything else (the heal included) as itself.
func family(f string) string {
	if fam, _, ok := faultrec.OpFamily(f); ok {
		return fam.Name
	}
	if rest, ok := strings.CutPrefix(f, "start-"); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(f, "stop-"); ok {
		return rest
	}
	return f
}

// faults pairs the nemesis ops of h into faults, by the rules the
// availability check uses: an end op ends the open faults of its family,
// a heal ends every open fault; a failed start is an instant unless it
// names the op it began, and a failed stop leaves its fault open until the
// heal. end is the end of the history. Faults are in the order they began.
func faults(h history.History, end time.Duration) []Fault {
	var out []Fault
	open := map[string][]int{} // family → indexes in out of its open faults
	closeAll := func(fam string, op history.Op) {
		for _, i := range open[fam] {
			out[i].End, out[i].EndIndex, out[i].EndF, out[i].Open = time.Duration(op.Time), op.Index, op.F, false
		}
		delete(open, fam)
	}
	for _, op := range h {
		if !op.Process.IsNemesis() {
			continue
		}
		fam, at := family(op.F), time.Duration(op.Time)
		fail, failed := failureOf(op)
		f := Fault{Family: fam, Start: at, End: end, Open: true, StartIndex: op.Index, EndIndex: -1}
		switch {
		case op.F == history.FHeal:
			for fam := range open {
				closeAll(fam, op)
			}
			f = describeHeal(op, f)
		case failed && strings.HasPrefix(op.F, "stop-"):
			f.Instant, f.Error = true, fail.Error
			f.Targets = "could not stop"
		case failed && fail.Op != "":
			f = describe(fail.Op, fail.Value, f)
			f.Error = fail.Error
			open[fam] = append(open[fam], len(out))
		case failed:
			f.Instant, f.Error, f.Targets = true, fail.Error, "could not start"
		case isEnd(op.F):
			closeAll(fam, op)
			continue
		default:
			f = describe(op.F, op.Value, f)
			f.Start -= tookOf(op)
			if isPaired(op.F) {
				open[fam] = append(open[fam], len(out))
			} else {
				f.Instant = true
			}
		}
		if f.Instant {
			f.End, f.Open = f.Start, false
		}
		out = append(out, f)
	}
	return out
}

// tookOf is how long a targeted sequence held the stage before its start
// op was recorded (faultrec.Targeted.TookMS), so that its band begins when
// the sequence did; 0 for any other op.
func tookOf(op history.Op) time.Duration {
	if !strings.HasPrefix(op.F, "start-") {
		return 0
	}
	v, err := faultrec.Decode(op.F, op.Value)
	if t, ok := v.(faultrec.Targeted); err == nil && ok && t.TookMS != nil {
		return time.Duration(*t.TookMS) * time.Millisecond
	}
	return 0
}

// failureOf is the value of op when op is a failed transition (a
// "start-X" or "stop-X" whose value holds an "error"; see
// faultrec.Failure).
func failureOf(op history.Op) (faultrec.Failure, bool) {
	if !strings.HasPrefix(op.F, "start-") && !strings.HasPrefix(op.F, "stop-") {
		return faultrec.Failure{}, false
	}
	v, err := faultrec.Decode(op.F, op.Value)
	fail, ok := v.(faultrec.Failure)
	return fail, err == nil && ok
}

// isEnd reports whether a nemesis op f ends the faults of its family.
func isEnd(f string) bool {
	_, phase, _ := faultrec.OpFamily(f)
	return phase == faultrec.Ends || strings.HasPrefix(f, "stop-")
}

// isPaired reports whether a nemesis op f begins a fault that a later op
// ends: the families' start ops and every start-X.
func isPaired(f string) bool {
	_, phase, _ := faultrec.OpFamily(f)
	return phase == faultrec.Begins || strings.HasPrefix(f, "start-")
}

// describeHeal is the instant of a heal: which families it healed, or,
// for the heal of a run's setup, what an earlier run had left.
func describeHeal(op history.Op, f Fault) Fault {
	f.Instant = true
	rec, err := faultrec.Decode(op.F, op.Value)
	if err != nil {
		f.Targets = fmt.Sprintf("undecodable %s value: %v", op.F, err)
		return f
	}
	v, _ := rec.(faultrec.Heal) // Decode's type for a heal
	f.Error = v.Error
	f.Targets = "healed everything"
	switch {
	case len(v.Leftovers) > 0:
		var parts []string
		for _, node := range slices.Sorted(maps.Keys(v.Leftovers)) {
			parts = append(parts, node+": "+strings.Join(v.Leftovers[node], ", "))
		}
		f.Targets = "setup removed what an earlier run left (" + strings.Join(parts, "; ") + ")"
	case len(v.Faults) > 0:
		f.Targets = "healed " + strings.Join(v.Faults, ", ")
	}
	if len(v.UndoRefused) > 0 {
		var parts []string
		for _, node := range slices.Sorted(maps.Keys(v.UndoRefused)) {
			parts = append(parts, fmt.Sprintf("%s: %d", node, v.UndoRefused[node]))
		}
		f.Targets += "; changes the fault file systems refused for want of room to keep old bytes, chaos's doing (" +
			strings.Join(parts, ", ") + ")"
	}
	return f
}
