package storeweb

import (
	"strings"

	"chaos/history"
)

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
// --nemesis names it), or "" when f starts none: kill, pause and
// clock-bump, and start-<family>.
func startedFamily(f string) string {
	switch f {
	case history.FKill, history.FPause:
		return f
	case history.FClockBump:
		return "clock"
	}
	fam, _ := strings.CutPrefix(f, "start-")
	if fam == f {
		return ""
	}
	return fam
}
