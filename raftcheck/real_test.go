package raftcheck

import (
	"path/filepath"
	"testing"

	"chaos/checker"
	"chaos/eventlog"
)

// The event logs under testdata/real come from real chaos node processes
// that node's TestRealRun* tests drove, with fault hooks, SIGKILL and
// restarts, into the interleaving each planted bug needs (see the scripts
// in node/raftbugs_test.go, and -capture-events there to make them anew).
// The wanted violations were read off the logs by hand:
//
//   - forget-vote: n3 voted for n2 in term 4 (its line 11), was killed,
//     restarted with the vote forgotten and voted for n1 in term 4 (line
//     15); n2 had led term 4 (its line 15) and n1 led it too (its line 18).
//   - commit-old-term: n3, leader of term 3, committed its term-1 entry at
//     index 2 by counting replicas and applied it (its line 14); n2 then led
//     term 4 with its own term-2 entry at index 2, and n2 (line 17) and n1
//     (line 15) applied that instead.
//
// The *-correct directories are the same scripts against correct nodes.
func TestRaftOnRealRuns(t *testing.T) {
	cases := map[string][]want{
		"forget-vote": {
			{KindDoubleVote, "n3", 4, 0, 15},
			{KindElectionSafety, "n1", 4, 0, 18},
		},
		"commit-old-term": {
			{KindStateMachineSafety, "n2", 2, 2, 17},
			{KindStateMachineSafety, "n1", 2, 2, 15},
		},
		"forget-vote-correct":     nil,
		"commit-old-term-correct": nil,
	}
	for name, wants := range cases {
		evs, _, err := eventlog.LoadRun(filepath.Join("testdata", "real", name))
		if err != nil {
			t.Fatal(err)
		}
		r := Raft(evs)
		d := raftDetails(t, r)
		wantValid := checker.Valid
		if len(wants) > 0 {
			wantValid = checker.Invalid
		}
		if r.Valid != wantValid || len(d.Violations) != len(wants) {
			t.Errorf("%s: valid %v, violations %+v; want %v with %d", name, r.Valid, d.Violations, wantValid, len(wants))
			continue
		}
		for i, w := range wants {
			v := d.Violations[i]
			if v.Kind != w.kind || v.Node != w.node || v.Term != w.term || v.Index != w.index || v.Line != w.line {
				t.Errorf("%s: violation %d is %+v, want %+v", name, i, v, w)
			}
		}
	}
}
