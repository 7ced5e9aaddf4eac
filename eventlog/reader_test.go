package eventlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// raftcheckData is where the Raft checker keeps its event-log fixtures,
// real runs' logs among them.
const raftcheckData = "../raftcheck/testdata"

// readFixture reads the file at path with ReadEvents, failing on an error.
func readFixture(t *testing.T, path string) ([]Event, []Warning) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, warns, err := ReadEvents(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return evs, warns
}

func TestReadEventsFields(t *testing.T) {
	evs, warns := readFixture(t, filepath.Join(raftcheckData, "forget-vote.jsonl"))
	if len(warns) != 0 || len(evs) != 11 {
		t.Fatalf("got %d events, warnings %v; want 11 and none", len(evs), warns)
	}
	v := evs[10]
	if v.Event != "vote" || v.Node != "n2" || v.Term != 2 || v.For != "n3" || v.Line != 11 ||
		v.Time.Format("15:04:05.000000") != "10:00:02.000300" {
		t.Errorf("line 11 read as %+v", v)
	}
	a, _ := readFixture(t, filepath.Join(raftcheckData, "divergent.jsonl"))
	if a[5].Hash != "00000000000000cc" || a[5].Index != 5 || a[5].Term != 3 {
		t.Errorf("apply read as %+v", a[5])
	}
}

func TestReadEventsTornLastLine(t *testing.T) {
	evs, warns := readFixture(t, filepath.Join("testdata", "torn.jsonl"))
	if len(evs) != 2 || evs[1].Event != "commit" || evs[1].Index != 2 {
		t.Errorf("events %+v, want the two whole lines", evs)
	}
	if len(warns) != 1 || warns[0].Line != 3 {
		t.Errorf("warnings %v, want one for line 3", warns)
	}
}

// A torn line that ends a life is skipped with a warning, whether the next
// life's start event follows on the next line (what chaos-node writes now:
// it ends a torn line on open) or on the same line (what older chaos-nodes
// left), or nothing follows.
func TestReadEventsTornLineEndsALife(t *testing.T) {
	start := `{"time":"2026-11-22T10:00:00Z","event":"start","node":"n1","term":2}`
	torn := `{"time":"2026-11-22T09:59:59Z","event":"app`
	for name, in := range map[string]string{
		"next line":   start + "\n" + torn + "\n" + start + "\n",
		"same line":   start + "\n" + torn + start + "\n",
		"ended, last": start + "\n" + torn + "\n",
		"cut short":   start + "\n" + `{"ti` + "\n" + start + "\n",
	} {
		evs, warns, err := ReadEvents(strings.NewReader(in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(warns) != 1 || warns[0].Line != 2 || !strings.Contains(warns[0].Msg, "torn") {
			t.Errorf("%s: warnings %v, want one for line 2", name, warns)
		}
		wantStarts := 2
		if name == "ended, last" {
			wantStarts = 1
		}
		if len(evs) != wantStarts || evs[len(evs)-1].Event != "start" || evs[len(evs)-1].Term != 2 {
			t.Errorf("%s: events %+v, want %d start events", name, evs, wantStarts)
		}
	}
}

func TestReadEventsErrorsNameTheLine(t *testing.T) {
	good := `{"time":"2026-11-22T10:00:00Z","event":"start","node":"n1"}` + "\n"
	cases := map[string]string{
		"not json":       good + "garbage\n" + good,
		"torn mid-life":  good + `{"time":"2026-11-22T10:00:00Z","ev` + "\n" + `{"time":"2026-11-22T10:00:01Z","event":"commit","node":"n1","index":3}` + "\n",
		"no node":        good + `{"time":"2026-11-22T10:00:00Z","event":"start"}` + "\n",
		"no time":        good + `{"event":"start","node":"n1"}` + "\n",
		"no event":       good + `{"time":"2026-11-22T10:00:00Z","node":"n1"}` + "\n",
		"bad time":       good + `{"time":"yesterday","event":"start","node":"n1"}` + "\n",
		"complete, last": good + `{"time":"2026-11-22T10:00:00Z","event":"start","node":3}`,
	}
	for name, in := range cases {
		_, _, err := ReadEvents(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: error %v, want one naming line 2", name, err)
		}
	}
}

func TestLoadRunMergesByTime(t *testing.T) {
	evs, _, err := LoadRun(filepath.Join(raftcheckData, "clean"))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1014 {
		t.Errorf("%d events, want 1014", len(evs))
	}
	nodes := map[string]bool{}
	for i, e := range evs {
		nodes[e.Node] = true
		if i > 0 && e.Time.Before(evs[i-1].Time) {
			t.Fatalf("event %d (%s line %d) is earlier than the one before it", i, e.Node, e.Line)
		}
	}
	if len(nodes) != 5 {
		t.Errorf("nodes %v, want n1..n5", nodes)
	}
	if _, _, err := LoadRun(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty run dir: %v, want ErrNotExist", err)
	}
}
