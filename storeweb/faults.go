package storeweb

import "chaos/history/faultrec"

// FaultCount is how many faults of one family a run started.
type FaultCount struct {
	Family string
	Count  int
}

// Faults counts the run's fault transitions (results.json's nemesis
// transitions) that start a fault, by family, in the order the families
// first struck. A start that failed counts too: it was tried.
func (r Run) Faults() []FaultCount {
	var out []FaultCount
	for _, tr := range r.Results.Nemesis.Transitions {
		fam := startedFamily(tr.F)
		if fam == "" {
			continue
		}
		i := 0
		for i < len(out) && out[i].Family != fam {
			i++
		}
		if i == len(out) {
			out = append(out, FaultCount{Family: fam})
		}
		out[i].Count++
	}
	return out
}

// startedFamily is the fault family a nemesis operation f starts (as
// --nemesis names it), or "" when f starts none: the families' start ops
// as the fault records' table names them (kill, pause, clock-bump,
// start-partition...), and any other start-<family>.
func startedFamily(f string) string { return faultrec.StartedFamily(f) }
