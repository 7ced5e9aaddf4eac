package raftcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"chaos/checker"
	"chaos/eventlog"
	"chaos/history"
)

// loadRun reads the event logs of a run directory under testdata.
func loadRun(t *testing.T, dir string) []eventlog.Event {
	t.Helper()
	evs, _, err := eventlog.LoadRun(filepath.Join("testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// Seed 004's situation (testdata/livelock-004, its candidacies in
// chaos-node's event-log format): three nodes with election timers of
// 5-9 ms stand together in every term and vote for themselves; terms
// 1..71 pass in 0.75 s without a leader. That is an election livelock,
// and it makes the availability check invalid.
func TestLivelockSeed004IsAFinding(t *testing.T) {
	r := CheckRun(filepath.Join("testdata", "livelock-004"), &Timeline{}, AvailabilityOptions{})["availability"]
	d := availDetails(t, r)
	if r.Valid != checker.Invalid || d.Liveness == nil || len(d.Liveness.Livelocks) != 1 {
		t.Fatalf("valid %v, liveness %+v, reason %q", r.Valid, d.Liveness, d.Reason)
	}
	l := d.Liveness.Livelocks[0]
	if l.FirstTerm != 1 || l.LastTerm != 71 || l.Terms != 71 || !slices.Equal(l.Candidates, []string{"n1", "n2", "n3"}) {
		t.Errorf("livelock %+v", l)
	}
	if l.Duration < 700*time.Millisecond || l.Duration > 800*time.Millisecond || l.Densest != 71 {
		t.Errorf("71 terms in %v, densest %d", l.Duration, l.Densest)
	}
	for _, want := range []string{"election livelock: 71 terms without a leader (terms 1..71) in 0.73 s",
		"candidates n1, n2, n3", "rule: >= 5 consecutive leaderless terms within 10s"} {
		if !strings.Contains(l.Text, want) || !strings.Contains(d.Reason, want) {
			t.Errorf("text %q, reason %q: want %q in both", l.Text, d.Reason, want)
		}
	}
	if d.Liveness.LongestLeaderlessRun != 71 || d.Liveness.LoadStart != nil || d.Liveness.Reason == "" {
		t.Errorf("liveness %+v: want the longest run 71 and no load start without a history", d.Liveness)
	}
}

// The rule's thresholds decide: the run holds 71 terms, one about every
// 10 ms.
func TestLivelockThresholds(t *testing.T) {
	evs := loadRun(t, "livelock-004")
	cases := []struct {
		rule  LivelockRule
		found bool
	}{
		{LivelockRule{Terms: 71, Window: time.Second}, true},
		{LivelockRule{Terms: 72, Window: time.Second}, false},          // longer than the run
		{LivelockRule{Terms: 5, Window: 25 * time.Millisecond}, false}, // terms begin 10 ms apart: 3 fit in 25 ms
		{LivelockRule{Terms: 3, Window: 25 * time.Millisecond}, true},
	}
	for _, c := range cases {
		got, longest := livelocks(termRecords(evs), c.rule, evs[0].Time, "after the first event")
		if (len(got) > 0) != c.found || longest != 71 {
			t.Errorf("rule %v: livelocks %+v (longest run %d), want found %v", c.rule, got, longest, c.found)
		}
	}
}

// A led term ends a run; terms no event shows do not.
func TestLeaderlessRuns(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(ms int, node string, kind eventlog.Kind, role eventlog.Role, term uint64) eventlog.Event {
		return eventlog.Event{Time: t0.Add(time.Duration(ms) * time.Millisecond), Node: node, Event: kind, Role: role, Term: term}
	}
	evs := []eventlog.Event{
		ev(0, "n1", eventlog.KindRole, eventlog.Candidate, 1),
		ev(1, "n1", eventlog.KindRole, eventlog.Leader, 1),
		ev(10, "n2", eventlog.KindRole, eventlog.Candidate, 2),
		ev(20, "n3", eventlog.KindVote, "", 3),
		ev(30, "n2", eventlog.KindRole, eventlog.Candidate, 5), // terms 4 unseen
		ev(40, "n2", eventlog.KindRole, eventlog.Leader, 6),
		ev(50, "n1", eventlog.KindRole, eventlog.Candidate, 7),
	}
	got, longest := livelocks(termRecords(evs), LivelockRule{Terms: 4, Window: time.Second}, t0, "after the first event")
	if len(got) != 1 || got[0].FirstTerm != 2 || got[0].LastTerm != 5 || got[0].Terms != 4 || longest != 4 {
		t.Fatalf("livelocks %+v, longest %d; want terms 2..5", got, longest)
	}
	if !slices.Equal(got[0].Candidates, []string{"n2"}) || got[0].Duration != 20*time.Millisecond {
		t.Errorf("livelock %+v", got[0])
	}
}

// A correct run's event logs with elections under faults
// (testdata/liveness-correct: chaos-node under the default mix with
// --nemesis-interval 3s, seed 43, trimmed: applies and commits past index
// 5 and most client ops left out). A partition, packet faults on every
// link, every node paused and resumed, two nodes killed: three terms got a
// leader, one split vote (term 3) got none. Neither rule finds anything.
func TestLivenessCorrectRunIsNoFinding(t *testing.T) {
	dir := filepath.Join("testdata", "liveness-correct")
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, _, err := history.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	evs := loadRun(t, "liveness-correct")
	r := Availability(evs, h, AvailabilityOptions{RecoveryBound: 5 * time.Second})
	d := availDetails(t, r)
	l := d.Liveness
	if r.Valid != checker.Valid || len(l.Livelocks) != 0 || len(l.Stuck) != 0 {
		t.Fatalf("valid %v, reason %q, liveness %+v", r.Valid, d.Reason, l)
	}
	if led := analyze(evs).Leaders; len(led) != 3 || l.LongestLeaderlessRun != 1 {
		t.Errorf("%d terms led, longest leaderless run %d: want 3 and the split vote of term 3", len(led), l.LongestLeaderlessRun)
	}
	if want := time.Date(2026, 11, 24, 15, 39, 56, 867267526, time.UTC); l.LoadStart == nil || !l.LoadStart.Equal(want) {
		t.Errorf("load start %v, want %v", l.LoadStart, want)
	}
	if l.LongestStuck > time.Second {
		t.Errorf("longest stuck %v", l.LongestStuck)
	}
}
