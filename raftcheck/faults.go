package raftcheck

import (
	"strings"

	"chaos/history"
	"chaos/history/faultrec"
)

// Which faults a history's nemesis ops leave active, so that the
// availability check judges recovery from the moment the last fault ended,
// not from the first stop after the last fault began: faults overlap (a
// pause may outlive the kill stopped after it), and the final stops of a
// run come one after the other.

// faultBegun is the op that began the fault an op f ends, for the ops
// that end a fault of the families whose stop op is not "stop-<family>"
// (kill's start, pause's resume, clock's clock-reset) and of partition and
// packet, as the fault records' table names them; ok is false for any
// other op. (The other families' "stop-<family>" are not paired here: like
// an op chaos does not know, they begin a fault that the heal ends.)
func faultBegun(f string) (begin string, ok bool) {
	fam, phase, known := faultrec.OpFamily(f)
	switch {
	case !known || phase != faultrec.Ends || f != fam.StopOp:
		return "", false
	case fam.Target == faultrec.TargetProcesses, fam.Target == faultrec.TargetLinks, fam.Target == faultrec.TargetClocks:
		return fam.StartOp, true
	}
	return "", false
}

// faultEffect is what one nemesis op does to the set of active faults.
type faultEffect struct {
	key    string // the fault it acts on: the op that begins it
	begins bool   // it begins (or leaves in place) the fault key
	ends   bool   // it ends the fault key
	all    bool   // it ends every fault (heal)
}

// effectOf classifies a nemesis op. A failed transition is a
// "start-<family>" or "stop-<family>" with an "error" in its value. A
// Start that failed did nothing, unless its value names the op it began
// ("op"), which then is active until its stop. A Stop that failed leaves
// its fault in place until the heal, which retries what it could not do.
// An op chaos does not know begins a fault of its own that only heal ends.
func effectOf(op history.Op) faultEffect {
	if op.F == history.FHeal {
		return faultEffect{all: true}
	}
	rec, err := faultrec.Decode(op.F, op.Value)
	if v, ok := rec.(faultrec.Failure); ok && err == nil {
		phase, family, _ := strings.Cut(op.F, "-")
		switch {
		case phase == "stop":
			return faultEffect{key: "failed stop of " + family, begins: true}
		case v.Op != "":
			return faultEffect{key: v.Op, begins: true}
		}
		return faultEffect{}
	}
	if begin, ok := faultBegun(op.F); ok {
		return faultEffect{key: begin, ends: true}
	}
	return faultEffect{key: op.F, begins: true}
}

// faultsEnd returns the index in h of the op after which no fault was
// active until the end (-1 when none ended them all), and the index of the
// last op that began a fault (-1 when none did).
func faultsEnd(h history.History) (end, lastBegin int) {
	active := map[string]bool{}
	end, lastBegin = -1, -1
	for i, op := range h {
		if !op.Process.IsNemesis() || op.Type == history.Invoke {
			continue
		}
		e := effectOf(op)
		wasActive := len(active) > 0
		switch {
		case e.all:
			clear(active)
		case e.ends:
			delete(active, e.key)
		case e.begins:
			active[e.key] = true
			lastBegin, end = i, -1
		}
		if wasActive && len(active) == 0 {
			end = i
		}
	}
	if len(active) > 0 {
		end = -1
	}
	return end, lastBegin
}
