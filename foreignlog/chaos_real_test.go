package foreignlog

import (
	"path/filepath"
	"testing"
)

// Real chaos-node event logs (kept by raftcheck's tests) parse entirely,
// pre-candidate roles included, and show the run's one leader.
func TestChaosFormatOnRealEventLogs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "raftcheck", "testdata", "clean", "nodes", "*", "events.jsonl"))
	if err != nil || len(paths) != 5 {
		t.Fatalf("want the five real event logs, got %v (%v)", paths, err)
	}
	var logs []Log
	for _, p := range paths {
		l, err := ReadFile(p, "")
		if err != nil {
			t.Fatal(err)
		}
		if l.Format != "chaos" || l.Stats.Unparsed != 0 {
			t.Fatalf("%s: format %q, %d unparsed lines (first %v)", p, l.Format, l.Stats.Unparsed, l.Stats.FirstUnparsed)
		}
		logs = append(logs, l)
	}
	var evs []Event
	for _, l := range logs {
		evs = append(evs, l.Events...)
	}
	f := Analyze(evs)
	if len(f.Leaders) != 1 || f.Leaders[0].Term != 1 || f.Leaders[0].Node != "n5" {
		t.Fatalf("leaders: %+v, want n5 alone in term 1", f.Leaders)
	}
}
