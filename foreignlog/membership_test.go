package foreignlog

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/eventlog"
)

// Seed 002, read by hand: every node replays its WAL from an empty
// configuration and adds the members one by one, so the cluster goes
// through voters=() (1) (1 2) (1 2 3), each configuration once, and every
// node reaches voters (1 2 3) before the first election.
func TestSeed002Membership(t *testing.T) {
	_, r := readSeed(t, "002", "etcd-trace")
	ms := r.Facts.Membership
	require.Len(t, ms, 4)
	var got []string
	for _, m := range ms {
		got = append(got, m.String())
		assert.Equal(t, []string{"1", "2", "3"}, m.Nodes, m.String())
	}
	assert.Equal(t, []string{"voters=()", "voters=(1)", "voters=(1 2)", "voters=(1 2 3)"}, got)
	assert.Equal(t, 10, ms[3].Line, "node 1 switched to (1 2 3) at line 10")

	var text bytes.Buffer
	Summary(&text, r)
	TimelineText(&text, r)
	assert.Contains(t, text.String(), "#4   +0.000s voters=(1 2 3); switched to by 1 2 3")
	assert.Contains(t, text.String(), "| conf #4        | conf #1        |                | #4 voters=(1 2 3)")
}

func TestEtcdConfigurationLines(t *testing.T) {
	in := "raft2021/05/06 22:26:15 INFO: 1 switched to configuration voters=(3 1 2) learners=(11)\n" +
		"raft2021/05/06 22:26:16 INFO: b switched to configuration voters=(1 2 3)&&(1 2) learners=(4)\n" +
		"raft2021/05/06 22:26:17 INFO: 1 switched to configuration voters=(1 x)\n"
	evs, st, err := etcdParser{}.Parse(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, []int{3}, st.FirstUnparsed, "a member that is not a number")
	require.Len(t, evs, 2)
	assert.Equal(t, Event{Time: evs[0].Time, Node: "1", Kind: KindConf, Voters: []string{"1", "2", "3"},
		Learners: []string{"b"}, Line: 1}, evs[0], "IDs in hex, as etcd names nodes, sorted by ID")
	assert.Equal(t, []string{"1", "2", "3"}, evs[1].Voters, "a joint configuration's incoming voters")
	assert.Equal(t, []string{"4"}, evs[1].Learners)
}

func TestChaosConfEvent(t *testing.T) {
	ev, ok := parseChaosLine(`{"time":"2026-01-02T10:00:00Z","event":"conf","node":"n1","index":7,"term":2,"change":"add-learner n4","voters":"n1,n2,n3","learners":"n4"}`)
	require.True(t, ok)
	assert.Equal(t, Event{Time: ev.Time, Node: "n1", Kind: KindConf, Index: 7, Term: 2, Change: "add-learner n4",
		Voters: []string{"n1", "n2", "n3"}, Learners: []string{"n4"}}, ev)
}

// conf builds a chaos-node conf event of node at second s.
func conf(s int, node string, index int, change, voters, learners string) Event {
	return Event{Time: time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC), Node: node, Kind: KindConf, Index: index,
		Change: change, Voters: eventlog.Members(voters), Learners: eventlog.Members(learners)}
}

// A chaos-node cluster grows from three voters to four and back, a
// restarted node replays the changes from its log, and a node restored
// from a snapshot joins the configuration in force at the snapshot's
// index: each configuration appears once, with the nodes that switched
// to it.
func TestMembershipFollowsIndexes(t *testing.T) {
	evs := []Event{
		conf(0, "n1", 0, "", "n1,n2,n3", ""),
		conf(0, "n2", 0, "", "n1,n2,n3", ""),
		conf(1, "n1", 5, "add-learner n4", "n1,n2,n3", "n4"),
		conf(2, "n1", 8, "promote-voter n4", "n1,n2,n3,n4", ""),
		conf(2, "n2", 5, "add-learner n4", "n1,n2,n3", "n4"),
		conf(3, "n2", 8, "promote-voter n4", "n1,n2,n3,n4", ""),
		conf(4, "n1", 12, "remove-node n4", "n1,n2,n3", ""),
		conf(5, "n2", 0, "", "n1,n2,n3", ""), // n2 restarts: its initial members, then its log again
		conf(5, "n2", 5, "add-learner n4", "n1,n2,n3", "n4"),
		conf(6, "n3", 10, "", "n1,n2,n3,n4", ""), // n3 restored a snapshot of index 10
	}
	ms := Analyze(evs).Membership
	type m struct {
		index int
		text  string
		nodes string
	}
	var got []m
	for _, x := range ms {
		got = append(got, m{x.Index, x.String(), strings.Join(x.Nodes, " ")})
	}
	assert.Equal(t, []m{
		{0, "voters=(n1 n2 n3)", "n1 n2"},
		{5, "voters=(n1 n2 n3) learners=(n4)", "n1 n2"},
		{8, "voters=(n1 n2 n3 n4)", "n1 n2 n3"},
		{12, "voters=(n1 n2 n3)", "n1"},
	}, got)
	assert.Equal(t, "remove-node n4 at index 12", ms[3].origin())
	assert.Equal(t, 4*time.Second, ms[3].At)
}

// The text timeline has a MEMBERS column only for a log with
// configurations; each row that first shows one names it.
func TestTimelineMembersColumn(t *testing.T) {
	r := NewReport(Log{Format: "chaos", Events: []Event{
		conf(0, "n1", 0, "", "n1,n2", ""),
		{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Node: "n2", Kind: KindStart},
		conf(1, "n2", 0, "", "n1,n2", ""),
		conf(2, "n1", 4, "add-learner n3", "n1,n2", "n3"),
	}})
	rows := Timeline(r)
	require.Len(t, rows, 3)
	assert.Equal(t, "#1 voters=(n1 n2)", rows[0].Members)
	assert.Equal(t, []string{"conf #1", "start"}, []string{rows[0].Cells[0].Text, rows[0].Cells[1].Text})
	assert.Equal(t, "", rows[1].Members)
	assert.Equal(t, "#2 voters=(n1 n2) learners=(n3), add-learner n3 at index 4", rows[2].Members)
	var b bytes.Buffer
	TimelineText(&b, r)
	assert.Contains(t, b.String(), "| MEMBERS\n")

	b.Reset()
	TimelineText(&b, NewReport(Log{Events: []Event{{Node: "n1", Kind: KindStart}}}))
	assert.NotContains(t, b.String(), "MEMBERS")
}
