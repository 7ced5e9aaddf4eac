package raftcheck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"chaos/eventlog"
	"chaos/foreignlog"
)

// MaxNonVoterVotes bounds the votes of non-voters [MembershipDetails]
// lists; it counts them all.
const MaxNonVoterVotes = 100

// MembershipDetails is what [Raft] found of a run's membership, from its
// conf events (results.json's raft.membership; absent for event logs
// without any).
type MembershipDetails struct {
	// Configurations are those the cluster went through, by index (see
	// membership.history), at most MaxConfigurations.
	Configurations        []Configuration `json:"configurations"`
	OmittedConfigurations int             `json:"omitted_configurations,omitempty"`
	// QuorumsChecked counts the terms whose leader was checked to have had
	// the votes of a majority of the voters of its configuration;
	// QuorumsUndecided the terms with one leader that could not be (see
	// quorums).
	QuorumsChecked   int `json:"quorums_checked"`
	QuorumsUndecided int `json:"quorums_undecided"`
	// NonVoterVotes are votes cast by nodes that no configuration in force
	// had as a voter (see nonVoterVotes): informational, not violations.
	NonVoterVotes        []Vote `json:"nonvoter_votes"`
	NonVoterVotesCount   int    `json:"nonvoter_votes_count"`
	OmittedNonVoterVotes int    `json:"omitted_nonvoter_votes,omitempty"`
}

// Vote is one vote event, with what was found of it.
type Vote struct {
	Node string    `json:"node"`
	Term uint64    `json:"term"`
	For  string    `json:"for"`
	Time time.Time `json:"time"`
	Line int       `json:"line"` // in the voter's events.jsonl
	Text string    `json:"text"`
}

// quorums checks, for every term exactly one node led, that the leader had
// the votes of a majority of the voters of the configuration it was
// elected in. It judges only where the events decide it, the term counted
// undecided otherwise:
//
//   - The leader's configuration at its election is the last one in its
//     log then. Once any node applied an entry of the leader's term (j, the
//     lowest such index), the leader's log at its election was the
//     committed log below its first entry of the term, so the
//     configuration is the one in force as of j-1, provided no entry of the
//     term changed it in between: it is taken from a stretch some node's
//     events show exactly (membership.at) whose configuration an entry (or
//     snapshot) of an earlier term made. No applied entry of the term, or
//     no such stretch: undecided.
//   - A node writes its vote before any message says it voted, so every
//     vote the leader counted is in the voter's event log; a voter of that
//     configuration with no event log at all leaves the term undecided.
//
// Votes for the leader in its term from nodes outside the configuration's
// voters do not count, which is the point: a removed node's vote never
// makes a leader. Terms two nodes led are Election Safety's. firstApplied
// maps each term to the lowest index applied with an entry of it, in all
// the events; events need hold only the votes of them (see read.go).
func (m *membership) quorums(events []eventlog.Event, firstApplied map[uint64]uint64, f foreignlog.Facts) (out []Violation, checked, undecided int) {
	type ballot struct {
		term uint64
		For  string
	}
	votes := map[ballot][]string{} // -> the voters, in slice order
	nodes := map[string]bool{}
	for _, e := range events {
		nodes[e.Node] = true
		if e.Event == eventlog.KindVote {
			b := ballot{e.Term, e.For}
			if !slices.Contains(votes[b], e.Node) {
				votes[b] = append(votes[b], e.Node)
			}
		}
	}
	for _, t := range firstTenures(f) {
		term := uint64(t.Term)
		conf, ok := m.electedIn(term, firstApplied)
		if !ok || !allPresent(conf.Voters, nodes) {
			undecided++
			continue
		}
		checked++
		voters := votes[ballot{term, t.Node}]
		counted := slices.DeleteFunc(slices.Clone(voters), func(n string) bool { return !conf.isVoter(n) })
		if need := len(conf.Voters)/2 + 1; len(counted) < need {
			out = append(out, Violation{Kind: KindLeaderWithoutMajority, Node: t.Node, Term: term,
				Time: f.Start.Add(t.Start), Line: t.Line,
				Text: fmt.Sprintf("%s became leader of term %d with votes from %s: %d of the voters of its configuration, %s, where a majority is %d",
					t.Node, term, orNone(voters), len(counted), conf, need)})
		}
	}
	return out, checked, undecided
}

// electedIn returns the configuration a leader of term was elected in,
// when the events decide it (see quorums); firstApplied maps each term to
// the lowest index applied with an entry of it.
func (m *membership) electedIn(term uint64, firstApplied map[uint64]uint64) (Configuration, bool) {
	j, ok := firstApplied[term]
	if !ok || j == 0 {
		return Configuration{}, false
	}
	conf, ok := m.at(j - 1)
	if !ok || conf.Term >= term {
		return Configuration{}, false
	}
	return conf, true
}

// firstTenures returns the first tenure of every term exactly one node
// led.
func firstTenures(f foreignlog.Facts) []foreignlog.Tenure {
	var out []foreignlog.Tenure
	seen := map[int]bool{}
	for _, t := range f.Leaders {
		if !seen[t.Term] && !slices.Contains(f.TwoLeaderTerms, t.Term) {
			seen[t.Term] = true
			out = append(out, t)
		}
	}
	return out
}

func allPresent(names []string, nodes map[string]bool) bool {
	for _, n := range names {
		if !nodes[n] {
			return false
		}
	}
	return true
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "nobody"
	}
	return strings.Join(names, ", ")
}

// nonVoterVotes returns the votes cast by a node that was a voter of none
// of the configurations that could have been in force: neither the last
// one it had applied itself (the conf event before the vote in its own
// file, in the same life), nor the latest any node had applied by the
// vote's time (node clocks), nor the one the next membership change made
// after either, since Raft uses a configuration from its entry's append,
// before it commits. A vote the voter's own events cannot place (no conf
// event before it in its life) is not judged. Any node may answer a vote
// request, and Raft only promises that such votes are not counted (see
// quorums), so these are reported for information, not as violations.
func (m *membership) nonVoterVotes(byNode map[string][]eventlog.Event, events []eventlog.Event) []Vote {
	cluster := latestByTime(events)
	var out []Vote
	for _, node := range sortedKeys(byNode) {
		var own *Configuration
		for _, e := range byNode[node] {
			switch e.Event {
			case eventlog.KindStart:
				own = nil
			case eventlog.KindConf:
				c := configurationOf(e)
				own = &c
			case eventlog.KindVote:
				if own == nil {
					continue
				}
				views := []Configuration{*own}
				if c, ok := cluster.at(e.Time); ok {
					views = append(views, c)
				}
				if m.votesIn(e.Node, views) {
					continue
				}
				out = append(out, Vote{Node: e.Node, Term: e.Term, For: e.For, Time: e.Time, Line: e.Line,
					Text: fmt.Sprintf("%s voted for %s in term %d, a voter of none of the configurations that could be in force: %s",
						e.Node, e.For, e.Term, describeViews(views))})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Vote) int { return a.Time.Compare(b.Time) })
	return out
}

// votesIn reports whether node is a voter of one of views or of the
// configuration the change after it made.
func (m *membership) votesIn(node string, views []Configuration) bool {
	for _, c := range views {
		if c.isVoter(node) {
			return true
		}
		if n, ok := m.next(c.Index); ok && n.isVoter(node) {
			return true
		}
	}
	return false
}

func describeViews(views []Configuration) string {
	s := "its own " + views[0].String()
	if len(views) > 1 {
		s += ", the cluster's " + views[1].String()
	}
	return s + ", and the next"
}

// confTimeline is the latest configuration (by index) any node had applied,
// by time: each entry holds from its time until the next one's.
type confTimeline []Configuration

// latestByTime returns the timeline of the conf events.
func latestByTime(events []eventlog.Event) confTimeline {
	var confs []Configuration
	for _, e := range events {
		if e.Event == eventlog.KindConf {
			confs = append(confs, configurationOf(e))
		}
	}
	slices.SortStableFunc(confs, func(a, b Configuration) int { return a.Time.Compare(b.Time) })
	var out confTimeline
	for _, c := range confs {
		if n := len(out); n == 0 || c.Index > out[n-1].Index {
			out = append(out, c)
		}
	}
	return out
}

// at returns the latest configuration any node had applied by t.
func (tl confTimeline) at(t time.Time) (Configuration, bool) {
	i, found := slices.BinarySearchFunc(tl, t, func(c Configuration, t time.Time) int {
		return cmp.Compare(c.Time.UnixNano(), t.UnixNano())
	})
	if found {
		for i+1 < len(tl) && tl[i+1].Time.Equal(t) {
			i++
		}
		return tl[i], true
	}
	if i == 0 {
		return Configuration{}, false
	}
	return tl[i-1], true
}

// check runs the membership checks of [Raft] and returns their violations
// and details; firstApplied is quorums'.
func (m *membership) check(events []eventlog.Event, byNode map[string][]eventlog.Event, f foreignlog.Facts,
	firstApplied map[uint64]uint64) ([]Violation, *MembershipDetails) {
	d := &MembershipDetails{}
	d.Configurations, d.OmittedConfigurations = m.history()
	out := disagreements(events)
	quorum, checked, undecided := m.quorums(events, firstApplied, f)
	d.QuorumsChecked, d.QuorumsUndecided = checked, undecided
	out = append(out, quorum...)
	votes := m.nonVoterVotes(byNode, events)
	d.NonVoterVotesCount = len(votes)
	if len(votes) > MaxNonVoterVotes {
		d.OmittedNonVoterVotes = len(votes) - MaxNonVoterVotes
		votes = votes[:MaxNonVoterVotes]
	}
	d.NonVoterVotes = append([]Vote{}, votes...)
	return out, d
}
