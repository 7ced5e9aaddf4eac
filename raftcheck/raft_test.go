package raftcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"chaos/checker"
	"chaos/eventlog"
)

// readFixture reads testdata/name with eventlog.ReadEvents, failing on an
// error.
func readFixture(t *testing.T, name string) ([]eventlog.Event, []eventlog.Warning) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, warns, err := eventlog.ReadEvents(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return evs, warns
}

func raftDetails(t *testing.T, r checker.Result) *RaftDetails {
	t.Helper()
	d, ok := r.Details.(*RaftDetails)
	if !ok {
		t.Fatalf("details are %T", r.Details)
	}
	return d
}

func TestRaftCleanRun(t *testing.T) {
	evs, _, err := eventlog.LoadRun(filepath.Join("testdata", "clean"))
	if err != nil {
		t.Fatal(err)
	}
	r := Raft(evs)
	d := raftDetails(t, r)
	if r.Valid != checker.Valid || len(d.Violations) != 0 {
		t.Fatalf("valid %v, violations %+v", r.Valid, d.Violations)
	}
	if len(d.Leaders) != 1 || d.Leaders[1] != "n5" {
		t.Errorf("leaders %v, want n5 in term 1", d.Leaders)
	}
	if strings.Join(d.Nodes, ",") != "n1,n2,n3,n4,n5" {
		t.Errorf("nodes %v", d.Nodes)
	}
}

func TestRaftRestartsWithinTheRules(t *testing.T) {
	evs, _ := readFixture(t, "restarts-ok.jsonl")
	r := Raft(evs)
	if d := raftDetails(t, r); r.Valid != checker.Valid {
		t.Errorf("valid %v, violations %+v", r.Valid, d.Violations)
	}
}

// want is the one violation a fixture must produce, and where.
type want struct {
	kind        string
	node        string
	term, index uint64
	line        int
}

func TestRaftViolations(t *testing.T) {
	cases := map[string][]want{
		"two-leaders.jsonl":      {{KindElectionSafety, "n3", 1, 0, 10}},
		"forget-vote.jsonl":      {{KindDoubleVote, "n2", 2, 0, 11}},
		"divergent.jsonl":        {{KindStateMachineSafety, "n2", 3, 5, 6}},
		"term-decreased.jsonl":   {{KindTermDecreased, "n1", 2, 0, 4}, {KindTermDecreased, "n2", 3, 0, 7}},
		"commit-decreased.jsonl": {{KindCommitDecreased, "n1", 0, 7, 3}},
	}
	for name, wants := range cases {
		evs, _ := readFixture(t, name)
		r := Raft(evs)
		d := raftDetails(t, r)
		if r.Valid != checker.Invalid || len(d.Violations) != len(wants) {
			t.Errorf("%s: valid %v, violations %+v; want invalid with %d", name, r.Valid, d.Violations, len(wants))
			continue
		}
		for i, w := range wants {
			v := d.Violations[i]
			if v.Kind != w.kind || v.Node != w.node || v.Term != w.term || v.Index != w.index || v.Line != w.line ||
				v.Time.IsZero() || v.Text == "" {
				t.Errorf("%s: violation %d is %+v, want %+v", name, i, v, w)
			}
			if d.Counts[w.kind] == 0 {
				t.Errorf("%s: counts %v miss %s", name, d.Counts, w.kind)
			}
		}
	}
}

func TestRaftFollowsFileOrderNotClocks(t *testing.T) {
	evs, _ := readFixture(t, "commit-decreased.jsonl")
	evs = evs[:3]
	evs[2].Index = 11 // 10 then 11: fine in file order
	evs[2].Time = evs[0].Time.Add(-1)
	evs[1], evs[2] = evs[2], evs[1] // merged by time, the later line comes first
	if r := Raft(evs); r.Valid != checker.Valid {
		t.Errorf("valid %v, violations %+v", r.Valid, raftDetails(t, r).Violations)
	}
}

func TestRaftCapsTheList(t *testing.T) {
	evs, _ := readFixture(t, "divergent.jsonl")
	base := evs[5]
	for i := range MaxViolations + 5 {
		e := base
		e.Index = uint64(100 + i)
		e.Hash = "x"
		evs = append(evs, e)
		e.Hash, e.Node = "y", "n1"
		evs = append(evs, e)
	}
	d := raftDetails(t, Raft(evs))
	if len(d.Violations) != MaxViolations || d.Omitted != 6 || d.Counts[KindStateMachineSafety] != MaxViolations+6 {
		t.Errorf("%d listed, %d omitted, counts %v", len(d.Violations), d.Omitted, d.Counts)
	}
}

func TestRaftNoEventsIsUnknown(t *testing.T) {
	r := Raft(nil)
	if r.Valid != checker.Unknown || raftDetails(t, r).Reason == "" {
		t.Errorf("valid %v, details %+v", r.Valid, r.Details)
	}
}

func TestRaftResultJSON(t *testing.T) {
	evs, _ := readFixture(t, "two-leaders.jsonl")
	b, err := json.Marshal(Raft(evs))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Valid      any               `json:"valid"`
		Leaders    map[string]string `json:"leaders"`
		Violations []map[string]any  `json:"violations"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Valid != false || got.Leaders["1"] != "n1" || len(got.Violations) != 1 ||
		got.Violations[0]["kind"] != KindElectionSafety || got.Violations[0]["time"] == nil {
		t.Errorf("results.json shape: %s", b)
	}
}
