package runreport

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// Partitions are said as who is cut off from whom, a clean split once,
// the smaller side first.
func TestCutWords(t *testing.T) {
	for _, c := range []struct {
		name string
		g    map[string][]string
		want string
	}{
		{"one node isolated", map[string][]string{"n1": {"n4"}, "n2": {"n4"}, "n3": {"n4"}, "n4": {"n1", "n2", "n3", "n5"}, "n5": {"n4"}},
			"n4 cut off from n1, n2, n3, n5"},
		{"halves", map[string][]string{"n1": {"n3", "n4", "n5"}, "n2": {"n3", "n4", "n5"}, "n3": {"n1", "n2"}, "n4": {"n1", "n2"}, "n5": {"n1", "n2"}},
			"n1, n2 cut off from n3, n4, n5"},
		{"the issue's example", map[string][]string{"n2": {"n4", "n5"}, "n4": {"n2"}, "n5": {"n2"}},
			"n2 cut off from n4, n5"},
		{"majorities ring", map[string][]string{"n1": {"n3", "n4"}, "n2": {"n4", "n5"}, "n3": {"n5", "n1"}, "n4": {"n1", "n2"}, "n5": {"n2", "n3"}},
			"n1 cut off from n3, n4; n2 cut off from n4, n5; n3 cut off from n1, n5"},
		{"one way", map[string][]string{"n1": {"n2", "n3"}}, "n1 deaf to n2, n3"},
		{"nothing", map[string][]string{}, "no link cut"},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, cutWords(c.g)) })
	}
}

// nem is a nemesis op at sec seconds.
func nem(i int64, sec float64, f, value string) history.Op {
	return history.Op{Index: i, Time: int64(sec * 1e9), Process: history.NemesisProcess, Type: history.Info, F: f,
		Value: json.RawMessage(value)}
}

// Every family's band label says its targets in words.
func TestFaultLabelsInWords(t *testing.T) {
	for _, c := range []struct {
		f, value, want string
	}{
		{history.FKill, `{"nodes":["n1","n3"],"mode":"minority","effect":"observed"}`, "n1, n3 killed (minority)"},
		{history.FPause, `{"nodes":["n2"],"mode":"one","effect":"observed"}`, "n2 paused (one)"},
		{history.FStartPartition, `{"mechanism":"iptables","n2":["n4","n5"],"n4":["n2"],"n5":["n2"]}`, "n2 cut off from n4, n5"},
		{history.FClockBump, `{"nodes":["n2","n3"],"mechanism":"hook","kind":"bump","offsets_ms":{"n2":500,"n3":-200}}`,
			"clocks jumped: n2 +500 ms, n3 -200 ms"},
		{history.FClockBump, `{"nodes":["n1"],"mechanism":"hook","kind":"strobe","delta_ms":200,"period_ms":10,"count":50}`,
			"n1 clock strobed ±200 ms every 10 ms, 50 times"},
		{history.FClockBump, `{"nodes":["n4"],"mechanism":"hook","kind":"rate","rates":{"n4":2}}`, "clock skewed: n4 at 2× speed"},
		{history.FStartPacket, `{"targets":{"n1":["n3","n2"]},"behavior":{"loss":0.1,"delay_ms":20,"jitter_ms":60,"reorder":0.1,"duplicate":0.01},"mechanism":{"loss":"netem"}}`,
			"n1 → n2, n3: 10% loss, 20–80 ms delay, 10% reordered, 1% duplicated"},
		{"start-lease", `{"cut":{"mechanism":"hooks","n1":["n3"],"n2":["n3"],"n3":["n1","n2"]},"effect":"not observed","leader":"n3","rate":0.2}`,
			"leader n3; n3 cut off from n1, n2"},
	} {
		t.Run(c.f, func(t *testing.T) {
			fs := faults(history.History{nem(0, 1, c.f, c.value)}, 5*time.Second)
			if assert.Len(t, fs, 1) {
				assert.Equal(t, c.want, fs[0].Targets)
			}
		})
	}
}

// Faults pair with their ends as the availability check pairs them; a heal
// ends what is open, a failed stop leaves its fault open until the heal,
// and a fault never ended runs to the end of the history.
func TestFaultsPairWithTheirEnds(t *testing.T) {
	h := history.History{
		nem(0, 1, history.FKill, `{"nodes":["n1"]}`),
		nem(1, 2, history.FStartPartition, `{"n1":["n2"],"n2":["n1"]}`),
		nem(2, 3, history.FStart, `{"nodes":["n1"]}`),
		nem(3, 4, "stop-partition", `{"error":"iptables: exit 1","op":"stop-partition"}`),
		nem(4, 5, "start-lease", `{"leader":"n2","took_ms":1500}`), // the sequence began at 3.5 s
		nem(5, 6, "stop-lease", `{"leader":"n2"}`),
		nem(6, 7, history.FHeal, `{"faults":["kill","partition"]}`),
		nem(7, 8, history.FPause, `{"nodes":["n3"]}`),
	}
	fs := faults(h, 10*time.Second)
	type span struct {
		family   string
		from, to float64
		open     bool
		instant  bool
	}
	var got []span
	for _, f := range fs {
		got = append(got, span{f.Family, f.Start.Seconds(), f.End.Seconds(), f.Open, f.Instant})
	}
	assert.Equal(t, []span{
		{"kill", 1, 3, false, false},
		{"partition", 2, 7, false, false}, // its stop failed: the heal ended it
		{"partition", 4, 4, false, true},  // the failed stop, marked
		{"lease", 3.5, 6, false, false},
		{"heal", 7, 7, false, true},
		{"pause", 8, 10, true, false},
	}, got)
	assert.Equal(t, "could not stop", fs[2].Targets)
	assert.Equal(t, "iptables: exit 1", fs[2].Error)
	assert.Equal(t, "healed kill, partition", fs[4].Targets)

	// The heal of a run's setup names what an earlier run left.
	fs = faults(history.History{nem(0, 0, history.FHeal,
		`{"leftovers":{"n2":["etcd process 42, paused"],"n1":["iptables chain CHAOS-PARTITION (2 rules)","tc root qdisc c4a5: on eth0"]}}`)}, time.Second)
	require.Len(t, fs, 1)
	assert.Equal(t, "setup removed what an earlier run left (n1: iptables chain CHAOS-PARTITION (2 rules), tc root qdisc c4a5: on eth0; n2: etcd process 42, paused)",
		fs[0].Targets)

	// A heal names the changes fault file systems refused: chaos's doing.
	fs = faults(history.History{nem(9, 9, history.FHeal, `{"faults":["power-loss"],"undo_refused":{"n3":2,"n1":5}}`)}, 10*time.Second)
	require.Len(t, fs, 1)
	assert.Equal(t, "healed power-loss; changes the fault file systems refused for want of room to keep old bytes, chaos's doing (n1: 5, n3: 2)",
		fs[0].Targets)
}

// A value that does not decode as its op's fault record (a field renamed,
// a type changed) is shown as such, with why, in the fault's label and
// tooltip: never a blank fault.
func TestUndecodableFaultValuesAreShown(t *testing.T) {
	h := history.History{
		nem(0, 1, history.FKill, `{"nodes":"n1"}`),
		nem(1, 2, history.FStart, `{"nodes":["n1"]}`),
		nem(2, 3, "start-kill", `{"error":"n3: kill: exited 1","op":"kill","value":{"nodes":[1]}}`),
		nem(3, 4, history.FClockBump, `{"nodes":["n2"],"offsets_ms":{"n2":"soon"}}`),
		nem(4, 5, history.FStartPartition, `{"groups":[["n1"],["n2","n3"]]}`),
		nem(5, 6, "start-figure8", `{"leader":"n3","lone_writes":true}`),
		nem(6, 7, history.FHeal, `{"faults":"kill"}`),
		nem(7, 8, history.FPause, ``),
	}
	fs := faults(h, 10*time.Second)
	var got []string
	for _, f := range fs {
		got = append(got, f.Targets)
	}
	assert.Equal(t, []string{
		"undecodable kill value: kill: json: cannot unmarshal string into Go struct field Process.nodes of type []string",
		"undecodable kill value: kill: json: cannot unmarshal number into Go struct field Process.nodes of type string",
		"undecodable clock-bump value: clock-bump: json: cannot unmarshal string into Go struct field Clock.offsets_ms of type int64",
		`undecodable start-partition value: start-partition: partition: node "groups": json: cannot unmarshal array into Go value of type string`,
		"undecodable start-figure8 value: start-figure8: want a count or a reason: json: cannot unmarshal bool into Go value of type int",
		"undecodable heal value: heal: json: cannot unmarshal string into Go struct field Heal.faults of type []string",
		"undecodable pause value: pause: no value",
	}, got)
	assert.Equal(t, "n3: kill: exited 1", fs[1].Error, "the failure itself decoded")
	assert.Contains(t, faultTitle(fs[0]), "undecodable kill value: ", "the band's tooltip says it too")
}

// The bands have a row per family in order of appearance, heals last;
// spans carry the words and shade the plot, heals do not.
func TestFaultRows(t *testing.T) {
	fs := faults(history.History{
		nem(0, 1, history.FStartPartition, `{"n1":["n2"],"n2":["n1"]}`),
		nem(1, 2, history.FHeal, `{}`),
		nem(2, 3, history.FKill, `{"nodes":["n1","n3"]}`),
		nem(3, 4, history.FStart, `{"nodes":["n1","n3"]}`),
	}, 5*time.Second)
	rows := faultRows(fs)
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"partition", "kill", "heal"}, names)
	assert.Equal(t, "n1, n3 killed", rows[1].Spans[0].Label)
	assert.Equal(t, "kill from 3.000 s to 4.000 s; n1, n3 killed; by: SIGKILL", rows[1].Spans[0].Title)
	assert.True(t, rows[0].Shade)
	assert.False(t, rows[2].Shade)
}
