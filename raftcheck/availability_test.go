package raftcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chaos/checker"
	"chaos/eventlog"
	"chaos/history"
)

func readHistory(t *testing.T, name string) history.History {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "history", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, _, err := history.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return h
}

func availDetails(t *testing.T, r checker.Result) *AvailabilityDetails {
	t.Helper()
	d, ok := r.Details.(*AvailabilityDetails)
	if !ok {
		t.Fatalf("details are %T", r.Details)
	}
	return d
}

func TestAvailabilityNoRecoveryIsInvalid(t *testing.T) {
	r := Availability(nil, readHistory(t, "no-recovery.jsonl"), AvailabilityOptions{})
	d := availDetails(t, r)
	if r.Valid != checker.Invalid || d.FinalHeal == nil || d.FinalHeal.F != "resume" || d.FinalHeal.Recovered {
		t.Fatalf("valid %v, final heal %+v, reason %q", r.Valid, d.FinalHeal, d.Reason)
	}
	if !strings.Contains(d.Reason, "no client op succeeded") || d.RecoveryBound != DefaultRecoveryBound {
		t.Errorf("reason %q, bound %v", d.Reason, d.RecoveryBound)
	}
	if len(d.Recoveries) != 2 || d.Recoveries[1].F != "heal" || d.Recoveries[1].Recovered {
		t.Errorf("recoveries %+v", d.Recoveries)
	}
	want := []ClientWindow{{Start: 100_000_000, End: 13_500_000_000, Duration: 13400 * time.Millisecond, Open: true}}
	if len(d.Unavailable) != 1 || d.Unavailable[0] != want[0] {
		t.Errorf("unavailable %+v, want %+v", d.Unavailable, want)
	}
}

func TestAvailabilityRecoveredIsValid(t *testing.T) {
	r := Availability(nil, readHistory(t, "recovered.jsonl"), AvailabilityOptions{})
	d := availDetails(t, r)
	if r.Valid != checker.Valid || d.Reason != "" {
		t.Fatalf("valid %v, reason %q", r.Valid, d.Reason)
	}
	wantRec := []Recovery{
		{Index: 5, F: "stop-partition", Time: 3_000_000_000, Recovered: true, After: 1500 * time.Millisecond},
		{Index: 8, F: "heal", Time: 5_000_000_000, Recovered: true, After: 200 * time.Millisecond},
	}
	if len(d.Recoveries) != 2 || d.Recoveries[0] != wantRec[0] || d.Recoveries[1] != wantRec[1] {
		t.Errorf("recoveries %+v, want %+v", d.Recoveries, wantRec)
	}
	if d.FinalHeal == nil || *d.FinalHeal != wantRec[0] {
		t.Errorf("final heal %+v, want the stop-partition", d.FinalHeal)
	}
	wantWin := ClientWindow{Start: 100_000_000, End: 4_500_000_000, Duration: 4400 * time.Millisecond}
	if len(d.Unavailable) != 1 || d.Unavailable[0] != wantWin {
		t.Errorf("unavailable %+v, want %+v", d.Unavailable, wantWin)
	}
}

func TestAvailabilitySlowRecoveryIsInvalid(t *testing.T) {
	r := Availability(nil, readHistory(t, "recovered.jsonl"), AvailabilityOptions{RecoveryBound: time.Second})
	if d := availDetails(t, r); r.Valid != checker.Invalid || !strings.Contains(d.Reason, "1.5s after stop-partition") {
		t.Errorf("valid %v, reason %q", r.Valid, d.Reason)
	}
}

// A bound the system did not state is advisory: a late recovery is
// reported, valid; no recovery at all is still invalid.
func TestAvailabilityAdvisoryBoundReportsSlowRecovery(t *testing.T) {
	opts := AvailabilityOptions{RecoveryBound: time.Second, RecoveryAdvisory: true}
	r := Availability(nil, readHistory(t, "recovered.jsonl"), opts)
	d := availDetails(t, r)
	if r.Valid != checker.Valid || d.Reason != "" || !d.RecoveryAdvisory {
		t.Errorf("valid %v, reason %q, advisory %v", r.Valid, d.Reason, d.RecoveryAdvisory)
	}
	if !strings.Contains(d.SlowRecovery, "1.5s after stop-partition") || !strings.Contains(d.SlowRecovery, "advisory") {
		t.Errorf("slow recovery %q", d.SlowRecovery)
	}
	r = Availability(nil, readHistory(t, "no-recovery.jsonl"), opts)
	if d := availDetails(t, r); r.Valid != checker.Invalid || d.SlowRecovery != "" || !strings.Contains(d.Reason, "no client op succeeded") {
		t.Errorf("no recovery: valid %v, reason %q, slow %q", r.Valid, d.Reason, d.SlowRecovery)
	}
}

func TestAvailabilityEndingAtTheHealIsUnknown(t *testing.T) {
	r := Availability(nil, readHistory(t, "ends-at-heal.jsonl"), AvailabilityOptions{})
	d := availDetails(t, r)
	if r.Valid != checker.Unknown || d.FinalHeal == nil || d.FinalHeal.F != "start" || !strings.Contains(d.Reason, "under the bound") {
		t.Errorf("valid %v, final heal %+v, reason %q", r.Valid, d.FinalHeal, d.Reason)
	}
}

func TestAvailabilityNeverHealedIsUnknown(t *testing.T) {
	h := readHistory(t, "ends-at-heal.jsonl")[:5] // up to the kill's aftermath
	r := Availability(nil, h, AvailabilityOptions{})
	if d := availDetails(t, r); r.Valid != checker.Unknown || !strings.Contains(d.Reason, "never healed") {
		t.Errorf("valid %v, reason %q", r.Valid, d.Reason)
	}
}

func TestAvailabilityWithoutFaults(t *testing.T) {
	h := readHistory(t, "recovered.jsonl")[:2]
	if r := Availability(nil, h, AvailabilityOptions{}); r.Valid != checker.Valid {
		t.Errorf("ok at 0.1s without faults: %v, %q", r.Valid, availDetails(t, r).Reason)
	}
	if r := Availability(nil, nil, AvailabilityOptions{}); r.Valid != checker.Unknown {
		t.Errorf("empty history: %v", r.Valid)
	}
}

func TestLeaderless(t *testing.T) {
	evs, _ := readFixture(t, "leaderless.jsonl")
	at := func(s float64) time.Time {
		return evs[0].Time.Add(time.Duration(s * float64(time.Second)))
	}
	want := []LeaderlessWindow{
		{Start: at(0), End: at(1), Duration: time.Second},             // before the first leader
		{Start: at(2), End: at(3), Duration: time.Second},             // n2 stands for term 2 while n1 still leads term 1
		{Start: at(4), End: at(6), Duration: 2 * time.Second},         // n2 stops; killed n1 restarts and wins term 3
		{Start: at(7), End: at(8), Duration: time.Second, Open: true}, // n1 steps down, then stops: no leader at the end
	}
	got := Leaderless(evs)
	if len(got) != len(want) {
		t.Fatalf("windows %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].Start.Equal(want[i].Start) || !got[i].End.Equal(want[i].End) ||
			got[i].Duration != want[i].Duration || got[i].Open != want[i].Open {
			t.Errorf("window %d is %+v, want %+v", i, got[i], want[i])
		}
	}
	open := Leaderless(evs[:9])
	if last := open[len(open)-1]; !last.Open || !last.Start.Equal(at(7)) || last.Duration != 0 {
		t.Errorf("window open at the end: %+v", last)
	}
}

func TestAvailabilityCleanRunJSON(t *testing.T) {
	evs, _, err := eventlog.LoadRun(filepath.Join("testdata", "clean"))
	if err != nil {
		t.Fatal(err)
	}
	r := Availability(evs, readHistory(t, "recovered.jsonl"), AvailabilityOptions{})
	d := availDetails(t, r)
	if len(d.Leaderless) == 0 || d.LeaderlessTotal <= 0 || !d.Leaderless[0].End.Equal(firstLeader(evs)) {
		t.Errorf("leaderless %+v, total %v", d.Leaderless, d.LeaderlessTotal)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"valid", "leaderless", "unavailable", "recoveries", "final_heal", "recovery_bound_ns"} {
		if _, ok := got[k]; !ok {
			t.Errorf("results.json lacks %q: %s", k, b)
		}
	}
}

// firstLeader returns the time of the first leader role event.
func firstLeader(evs []eventlog.Event) time.Time {
	for _, e := range evs {
		if e.Event == "role" && e.Role == "leader" {
			return e.Time
		}
	}
	return time.Time{}
}
