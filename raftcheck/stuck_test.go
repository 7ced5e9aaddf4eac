package raftcheck

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"chaos/checker"
	"chaos/eventlog"
	"chaos/history"
)

// t0 is where the synthetic runs below begin on the nodes' clocks.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// nodeEvents builds events from lines "<seconds> <node> <event> [<role>
// <term>]" (role events) or "<seconds> <node> apply" (an applied write),
// at t0 plus the seconds.
func nodeEvents(t *testing.T, lines ...string) []eventlog.Event {
	t.Helper()
	var evs []eventlog.Event
	for _, l := range lines {
		f := strings.Fields(l)
		secs, kind := mustFloat(t, f[0]), f[2]
		e := eventlog.Event{Time: t0.Add(time.Duration(secs * float64(time.Second))), Node: f[1], Event: eventlog.Kind(kind)}
		switch kind {
		case "role":
			e.Role, e.Term = eventlog.Role(f[3]), uint64(mustFloat(t, f[4]))
		case "apply":
			e.Index, e.Term, e.Hash = 2, 1, "0123456789abcdef"
		}
		evs = append(evs, e)
	}
	return evs
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// fiveNodes is the start of every synthetic run: n1..n5 start, n1 leads
// term 1 from 0.05 s, and a write is applied at 0.1 s (the history's first
// ok write is at 0.1 s too, so the load began at t0).
func fiveNodes(t *testing.T, more ...string) []eventlog.Event {
	lines := []string{"0 n1 start", "0 n2 start", "0 n3 start", "0 n4 start", "0 n5 start",
		"0.04 n1 role candidate 1", "0.05 n1 role leader 1", "0.1 n1 apply"}
	return nodeEvents(t, append(lines, more...)...)
}

const isolateN1 = `{"mechanism":"iptables","n1":["n2","n3","n4","n5"],"n2":["n1"],"n3":["n1"],"n4":["n1"],"n5":["n1"]}`

// The stuck-leaderless rule: no leader for more than the bound while a
// majority is up and connected is a finding; faults that take a majority
// away, or that the rule cannot judge, are not.
func TestStuckLeaderless(t *testing.T) {
	cases := map[string]struct {
		events  []string
		history history.History
		stuck   string // the faults of the one finding, "" for none
		longest time.Duration
	}{
		"a killed leader never replaced": {nil,
			timeline("0.1 ok", `2 kill {"nodes":["n1"]}`, "10 ok", "20 ok"), "killed n1", 18 * time.Second},
		"a killed leader replaced": {[]string{"3.2 n2 role candidate 2", "3.5 n2 role leader 2"},
			timeline("0.1 ok", `2 kill {"nodes":["n1"]}`, "10 ok", "20 ok"), "", 1500 * time.Millisecond},
		"a majority killed": {nil,
			timeline("0.1 ok", `2 kill {"nodes":["n1","n2","n3"]}`, "10 ok", "20 ok"), "", 0},
		"a leader cut off steps down, none follows": {[]string{"3 n1 role follower 1"},
			timeline("0.1 ok", "2 start-partition "+isolateN1, "10 ok", "20 ok"), "partitioned", 17 * time.Second},
		"then packet faults everywhere": {nil,
			timeline("0.1 ok", `2 kill {"nodes":["n1"]}`, `2.5 start-packet {"targets":{"n2":["n3","n4","n5"],"n3":["n4","n5"],"n4":["n5"]}}`,
				"20 ok"), "", 500 * time.Millisecond},
		"then a fault chaos does not know": {nil,
			timeline("0.1 ok", `2 kill {"nodes":["n1"]}`, `2.5 isolate-leader {"nodes":["n2"]}`, "20 ok"), "", 0},
		// A targeted sequence acts before its op is recorded: it counts
		// from the op before it, here the history's start.
		"a sequence that cut the leader off": {[]string{"1 n1 role follower 1"},
			timeline("0.1 ok", `15 start-vote-restart {"leader":"n1"}`, `18 stop-vote-restart {"leader":"n1"}`, "19 ok"),
			"", time.Second},
		"healed, then a new kill": {[]string{"3.2 n2 role candidate 2", "3.5 n2 role leader 2"},
			timeline("0.1 ok", `2 kill {"nodes":["n1"]}`, `4 start {"nodes":["n1"]}`, `6 kill {"nodes":["n2"]}`, "20 ok"),
			"killed n2", 14 * time.Second},
	}
	for name, c := range cases {
		r := Availability(fiveNodes(t, c.events...), c.history, AvailabilityOptions{})
		l := availDetails(t, r).Liveness
		if l == nil || l.LoadStart == nil || !l.LoadStart.Equal(t0) {
			t.Fatalf("%s: liveness %+v, want the load placed at t0", name, l)
		}
		if l.LongestStuck != c.longest {
			t.Errorf("%s: longest stuck %v, want %v", name, l.LongestStuck, c.longest)
		}
		switch {
		case c.stuck == "" && len(l.Stuck) > 0:
			t.Errorf("%s: stuck %+v, want none", name, l.Stuck)
		case c.stuck != "" && (len(l.Stuck) != 1 || l.Stuck[0].Faults != c.stuck || r.Valid != checker.Invalid):
			t.Errorf("%s: valid %v, stuck %+v, want one with faults %q", name, r.Valid, l.Stuck, c.stuck)
		case c.stuck != "" && !strings.Contains(l.Stuck[0].Text, "rule: no leader for more than 10s while a majority"):
			t.Errorf("%s: text %q states no rule", name, l.Stuck[0].Text)
		}
	}
}

// Without an ok write the load's start cannot be placed on the nodes'
// clocks: the stuck rule is not applied, and says why.
func TestStuckNeedsTheLoadStart(t *testing.T) {
	h := timeline(`2 kill {"nodes":["n1"]}`, "20 heal")
	l := availDetails(t, Availability(fiveNodes(t), h, AvailabilityOptions{})).Liveness
	if l.LoadStart != nil || len(l.Stuck) != 0 || !strings.Contains(l.Reason, "cannot be placed") {
		t.Errorf("liveness %+v", l)
	}
}

// A majority is connected when some majority of untouched nodes can all
// talk to each other: a bridge leaves one, a ring of majorities does not.
func TestMajorityConnected(t *testing.T) {
	nodes := []string{"n1", "n2", "n3", "n4", "n5"}
	cases := []struct {
		f, value string
		want     bool
	}{
		{"start-partition", `{"mechanism":"iptables","n1":["n4","n5"],"n2":["n4","n5"],"n4":["n1","n2"],"n5":["n1","n2"]}`, true}, // bridge n3
		{"start-partition", `{"n1":["n3","n4"],"n2":["n4","n5"],"n3":["n5","n1"],"n4":["n1","n2"],"n5":["n2","n3"]}`, false},      // ring
		{"start-partition", `{"n1":["n4"],"n4":["n1"]}`, true},
		{"kill", `{"nodes":["n1","n2"]}`, true},
		{"pause", `{"nodes":["n1","n2","n3"]}`, false},
		{"clock-bump", `{"nodes":["n1","n2","n3"]}`, false},
		{"kill", `{"mode":"leader"}`, false}, // targets unknown
		{"start-kill", `{"error":"n3: exited 1","op":"kill","value":{"nodes":["n1","n2","n3"]}}`, false},
		{"start-kill", `{"error":"n3: exited 1"}`, true}, // it did nothing
		{"start-election-delay", `{"leader":"n1"}`, false},
		{"start-power-loss", `{"nodes":["n1","n2"],"mode":"minority"}`, true},
		{"start-power-loss", `{"nodes":["n1","n2","n3","n4","n5"],"mode":"all"}`, false},
		{"start-corrupt", `{"nodes":["n4","n5"],"mode":"minority","files":{}}`, true},
		{"start-power-loss", `{"mode":"all"}`, false}, // targets unknown
	}
	for _, c := range cases {
		s := newClusterState()
		s.apply(c.f, []byte(c.value))
		if got := s.majorityConnected(nodes); got != c.want {
			t.Errorf("%s %s: majority connected %v, want %v", c.f, c.value, got, c.want)
		}
	}
	s := newClusterState()
	s.apply("pause", []byte(`{"nodes":["n1","n2","n3"]}`))
	s.apply("resume", []byte(`{"nodes":["n2"]}`))
	if !s.majorityConnected(nodes) || s.describe() != "paused n1,n3" {
		t.Errorf("after resuming n2: %v, %q", s.majorityConnected(nodes), s.describe())
	}
	s.apply("start-election-delay", []byte(`{"error":"cut short","op":"start-election-delay","value":{}}`))
	if s.majorityConnected(nodes) {
		t.Errorf("a failed start of a family chaos does not know left a connected majority")
	}
	s.apply("stop-election-delay", []byte(`{}`))
	if !s.majorityConnected(nodes) {
		t.Errorf("its stop did not end it")
	}
	s.apply("start-power-loss", []byte(`{"nodes":["n1","n2","n3"],"mode":"majority"}`))
	if s.majorityConnected(nodes) {
		t.Errorf("a majority lost power, yet a majority is connected")
	}
	s.apply("stop-power-loss", []byte(`{"nodes":["n1","n2","n3"]}`))
	if !s.majorityConnected(nodes) {
		t.Errorf("its stop did not bring them back: %q", s.describe())
	}
	s.apply("heal", nil)
	if !s.majorityConnected(nodes) || s.describe() != "no fault" {
		t.Errorf("after the heal: %q", s.describe())
	}
}

// With conf events the stuck rule weighs the voters of the configuration
// of the time, not the nodes seen. n5 and n4 are removed at 1 s and 1.5 s
// (still running, as far as the nemesis ops say): with n1 and n2 killed,
// the three nodes up are a majority of the five seen but not of the three
// voters, and no leader is owed; with n1 alone killed, one is. Without a
// change, the voters are the starting configuration.
func TestStuckFollowsTheVoters(t *testing.T) {
	conf := func(secs float64, index uint64, change, voters string) eventlog.Event {
		return eventlog.Event{Time: t0.Add(time.Duration(secs * float64(time.Second))), Node: "n1", Event: eventlog.KindConf,
			Index: index, Term: 1, Change: change, Voters: voters}
	}
	shrunk := []eventlog.Event{conf(0, 0, "", "n1,n2,n3,n4,n5"), conf(1, 3, "remove-node n5", "n1,n2,n3,n4"),
		conf(1.5, 4, "remove-node n4", "n1,n2,n3")}
	for _, c := range []struct {
		confs []eventlog.Event
		kill  string
		stuck string
	}{
		{shrunk, `["n1","n2"]`, ""},
		{shrunk, `["n1"]`, "killed n1"},
		{shrunk[:1], `["n1"]`, "killed n1"},
		{nil, `["n1","n2"]`, "killed n1,n2"}, // the nodes seen, as before conf events
	} {
		h := timeline("0.1 ok", `2 kill {"nodes":`+c.kill+`}`, "10 ok", "20 ok")
		l := availDetails(t, Availability(append(fiveNodes(t), c.confs...), h, AvailabilityOptions{})).Liveness
		if (c.stuck == "") != (len(l.Stuck) == 0) || (c.stuck != "" && l.Stuck[0].Faults != c.stuck) {
			t.Errorf("%d confs, kill %s: stuck %+v, want %q", len(c.confs), c.kill, l.Stuck, c.stuck)
		}
	}
}
