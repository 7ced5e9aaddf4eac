package raftcheck

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"chaos/checker"
	"chaos/eventlog"
)

// configs lists a run's configurations as "index:voters/learners".
func configs(d *MembershipDetails) []string {
	var out []string
	for _, c := range d.Configurations {
		out = append(out, strconv.FormatUint(c.Index, 10)+":"+strings.Join(c.Voters, ",")+"/"+strings.Join(c.Learners, ","))
	}
	return out
}

// A cluster grows from three voters to five, n4 joining with an empty log
// and n5 from a snapshot, elects n4 with three of the five voters (two of
// them new), then n4 removes n5 and itself and n1 leads the three left:
// valid, every leader's majority checked, no vote by a non-voter.
func TestMembershipGrowAndShrink(t *testing.T) {
	evs, _ := readFixture(t, "membership-grow-shrink.jsonl")
	r := Raft(evs)
	d := raftDetails(t, r)
	if r.Valid != checker.Valid {
		t.Fatalf("valid %v, violations %+v", r.Valid, d.Violations)
	}
	m := d.Membership
	if m == nil {
		t.Fatal("no membership details")
	}
	want := []string{"0:n1,n2,n3/", "2:n1,n2,n3/n4", "3:n1,n2,n3,n4/", "4:n1,n2,n3,n4/n5",
		"5:n1,n2,n3,n4,n5/", "7:n1,n2,n3,n4/", "8:n1,n2,n3/"}
	if got := configs(m); !slices.Equal(got, want) {
		t.Errorf("configurations %v, want %v", got, want)
	}
	if m.QuorumsChecked != 3 || m.QuorumsUndecided != 0 || m.NonVoterVotesCount != 0 {
		t.Errorf("quorums checked %d, undecided %d, non-voter votes %+v", m.QuorumsChecked, m.QuorumsUndecided, m.NonVoterVotes)
	}
}

// n4's election in term 2 needs three of the five voters: without n5's
// vote it had two, a majority of the old three but not of the five it was
// elected in.
func TestMembershipLeaderWithoutMajority(t *testing.T) {
	evs, _ := readFixture(t, "membership-grow-shrink.jsonl")
	evs = slices.DeleteFunc(evs, func(e eventlog.Event) bool {
		return e.Event == eventlog.KindVote && e.Node == "n5" && e.Term == 2
	})
	r := Raft(evs)
	d := raftDetails(t, r)
	if r.Valid != checker.Invalid || len(d.Violations) != 1 {
		t.Fatalf("valid %v, violations %+v; want one", r.Valid, d.Violations)
	}
	v := d.Violations[0]
	if v.Kind != KindLeaderWithoutMajority || v.Node != "n4" || v.Term != 2 || v.Line != 49 ||
		!strings.Contains(v.Text, "votes from n4, n2: 2 of the voters of its configuration, voters n1,n2,n3,n4,n5 (index 5), where a majority is 3") {
		t.Errorf("violation %+v", v)
	}
}

// A removed node that applied its removal keeps granting votes: they are
// listed, not counted, and n1's term-3 majority is n1 and n2. Without n2's
// vote n1 would have led term 3 on a removed node's vote.
func TestMembershipRemovedNodeKeepsVoting(t *testing.T) {
	evs, _ := readFixture(t, "membership-removed-votes.jsonl")
	r := Raft(evs)
	d := raftDetails(t, r)
	if r.Valid != checker.Valid {
		t.Fatalf("valid %v, violations %+v", r.Valid, d.Violations)
	}
	m := d.Membership
	if m.QuorumsChecked != 2 || m.NonVoterVotesCount != 2 || len(m.NonVoterVotes) != 2 {
		t.Fatalf("membership %+v", m)
	}
	for i, term := range []uint64{2, 3} {
		if v := m.NonVoterVotes[i]; v.Node != "n3" || v.Term != term || v.Line == 0 || !strings.Contains(v.Text, "its own voters n1,n2 (index 2)") {
			t.Errorf("non-voter vote %d: %+v", i, v)
		}
	}

	evs = slices.DeleteFunc(evs, func(e eventlog.Event) bool {
		return e.Event == eventlog.KindVote && e.Node == "n2" && e.Term == 3
	})
	r = Raft(evs)
	d = raftDetails(t, r)
	if r.Valid != checker.Invalid || len(d.Violations) != 1 || d.Violations[0].Kind != KindLeaderWithoutMajority ||
		d.Violations[0].Node != "n1" || d.Violations[0].Term != 3 {
		t.Fatalf("valid %v, violations %+v; want n1's term 3 without a majority", r.Valid, d.Violations)
	}
}

// The old n3, removed without learning it, campaigns alone in terms 2 and
// 3 and stops; a new n3 joins empty, is restored from a snapshot, promoted,
// and votes in term 3. The name is two members in turn: neither its term
// going back to 0 nor its two votes in term 3 are violations.
func TestMembershipNameReused(t *testing.T) {
	evs, _ := readFixture(t, "membership-readded.jsonl")
	r := Raft(evs)
	d := raftDetails(t, r)
	if r.Valid != checker.Valid {
		t.Fatalf("valid %v, violations %+v", r.Valid, d.Violations)
	}
	m := d.Membership
	want := []string{"0:n1,n2,n3/", "2:n1,n2/", "4:n1,n2/n3", "5:n1,n2,n3/"}
	if got := configs(m); !slices.Equal(got, want) {
		t.Errorf("configurations %v, want %v", got, want)
	}
	if m.QuorumsChecked != 3 || m.NonVoterVotesCount != 0 {
		t.Errorf("membership %+v", m)
	}

	// Without conf events the same lives are one node's: its term went
	// back and it voted twice in term 3, as before membership changes.
	old := slices.DeleteFunc(slices.Clone(evs), func(e eventlog.Event) bool { return e.Event == eventlog.KindConf })
	kinds := map[string]int{}
	for _, v := range raftDetails(t, Raft(old)).Violations {
		kinds[v.Kind]++
	}
	if kinds[KindTermDecreased] != 1 || kinds[KindDoubleVote] != 1 {
		t.Errorf("without conf events: violations %v", kinds)
	}
}

// Two nodes that applied different configurations at one index break the
// membership's State Machine Safety.
func TestMembershipDisagreement(t *testing.T) {
	evs, _ := readFixture(t, "membership-removed-votes.jsonl")
	for i, e := range evs {
		if e.Event == eventlog.KindConf && e.Node == "n2" && e.Index == 2 {
			evs[i].Voters, evs[i].Change = "n2,n3", "remove-node n1"
		}
	}
	d := raftDetails(t, Raft(evs))
	if d.Counts[KindConfDisagreement] != 1 {
		t.Fatalf("violations %+v", d.Violations)
	}
	for _, v := range d.Violations {
		if v.Kind == KindConfDisagreement && (v.Node != "n2" || v.Index != 2 || !strings.Contains(v.Text, "n1 applied voters n1,n2 (index 2)")) {
			t.Errorf("violation %+v", v)
		}
	}
}

// Where the events do not decide a leader's configuration the majority is
// not judged: no entry of its term applied, or the stretch before it
// shown by nobody.
func TestMembershipUndecided(t *testing.T) {
	evs, _ := readFixture(t, "membership-removed-votes.jsonl")
	evs = slices.DeleteFunc(evs, func(e eventlog.Event) bool {
		return (e.Event == eventlog.KindApply && e.Term == 3) || (e.Event == eventlog.KindVote && e.Node == "n2" && e.Term == 3)
	})
	r := Raft(evs)
	if m := raftDetails(t, r).Membership; r.Valid != checker.Valid || m.QuorumsChecked != 1 || m.QuorumsUndecided != 1 {
		t.Errorf("valid %v, membership %+v", r.Valid, m)
	}
}

// Event logs without conf events are checked as before: no membership
// details at all.
func TestMembershipAbsentWithoutConfEvents(t *testing.T) {
	evs, _ := readFixture(t, "restarts-ok.jsonl")
	if d := raftDetails(t, Raft(evs)); d.Membership != nil {
		t.Errorf("membership %+v", d.Membership)
	}
}
