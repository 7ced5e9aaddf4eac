package faultrec

import (
	"encoding/json"
	"strings"
)

// Tally counts what became of a schedule's faults, from its nemesis ops:
// results.json's nemesis.counts. Refusals and probe misses are counted
// apart, so that neither hides the other: a probe that missed and was
// retried is no refusal, and a refusal says whether it came after misses.
type Tally struct {
	// Started counts the faults that began: a family's start op, or a
	// failed start that had done something (it has an "op").
	Started int `json:"started"`
	// Refused counts the starts that failed having done nothing (no
	// leader, a node that does not answer, a mechanism that failed at
	// once), not cut short.
	Refused int `json:"refused"`
	// Failed counts the other failed transitions not cut short: starts
	// that failed midway, stops that failed.
	Failed int `json:"failed"`
	// CutShort counts the transitions cut short (at the schedule's
	// deadline, or by their step timeout).
	CutShort int `json:"cut_short"`
	// ProbeMisses sums the probes of the nodes' states that missed a node
	// before a sequence went on or was refused.
	ProbeMisses int `json:"probe_misses"`
}

// Add counts the nemesis op f with the value raw; an op it cannot read
// counts as nothing.
func (t *Tally) Add(f string, raw json.RawMessage) {
	v, err := Decode(f, raw)
	if err != nil {
		return
	}
	switch v := v.(type) {
	case Failure:
		t.ProbeMisses += v.ProbeMisses
		switch {
		case v.CutShort || strings.Contains(v.Error, "(cut short: "): // the latter: histories before cut_short
			t.CutShort++
		case strings.HasPrefix(f, "start-") && v.Op == "":
			t.Refused++
		default:
			t.Failed++
		}
		if strings.HasPrefix(f, "start-") && v.Op != "" {
			t.Started++
		}
	case Targeted:
		if strings.HasPrefix(f, "start-") {
			t.Started++
			t.ProbeMisses += v.ProbeMisses
		}
	default:
		if _, phase, ok := OpFamily(f); ok && phase == Begins {
			t.Started++
		}
	}
}
