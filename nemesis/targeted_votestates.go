package nemesis

import (
	"context"

	"chaos/db"
)

// Votes seen in the nodes' states, for a system without event logs: a
// node's term rises when it campaigns and when a candidate of a newer term
// asks for its vote, which it then grants (unless its log is ahead). So a
// node of the newest term that neither leads nor campaigns, while another
// node campaigns or leads in that term, has voted for it, or is about to.
// A state that names its vote (db.NodeState.Vote) says so outright.

// Where vote-restart sees votes (its op's "votes_from").
const (
	votesFromEvents = "events"
	votesFromStates = "states"
)

// votesFrom is where vote-restart sees votes on c: the event logs when
// the system keeps them, else the nodes' states.
func votesFrom(c *Cluster) string {
	if c.Events != nil {
		return votesFromEvents
	}
	return votesFromStates
}

// findVoteIn is findVote on the event logs, or voteFromStates without.
func findVoteIn(ctx context.Context, c *Cluster, nodes []string, term uint64) (voteSeen, bool, error) {
	if c.Events != nil {
		return findVote(ctx, c, nodes, term)
	}
	st, err := states(ctx, c)
	if err != nil {
		return voteSeen{}, false, err
	}
	v, ok := voteFromStates(st, nodes, term)
	return v, ok, nil
}

// voteFromStates returns the first node of nodes, in their order, that
// the states st show voting, in the newest term of nodes after term, for
// the node campaigning or leading in it.
func voteFromStates(st map[string]db.NodeState, nodes []string, term uint64) (voteSeen, bool) {
	top := term
	for _, n := range nodes {
		if s, ok := st[n]; ok {
			top = max(top, s.Term)
		}
	}
	if top == term {
		return voteSeen{}, false
	}
	candidate := ""
	for _, n := range nodes {
		if s, ok := st[n]; ok && s.Term == top && (campaigns(s) || s.Vote == n) {
			candidate = n
			break
		}
	}
	for _, n := range nodes {
		s, ok := st[n]
		if !ok || n == candidate || s.Term != top || campaigns(s) {
			continue
		}
		votedFor := s.Vote
		if votedFor == "" {
			votedFor = s.Leader
		}
		if votedFor == "" {
			votedFor = candidate
		}
		if votedFor != "" && votedFor != n {
			return voteSeen{Node: n, For: votedFor, Term: top}, true
		}
	}
	return voteSeen{}, false
}

// campaigns reports whether a node in state s leads or campaigns.
func campaigns(s db.NodeState) bool {
	return s.Role == db.RoleLeader || s.Role == db.RoleCandidate || s.Role == db.RolePreCandidate
}

// secondVotesIn returns the candidates other than vote.For that vote.Node
// voted for in vote.Term since its restart: from its event log, or, from
// the states, the one it names as its vote, or a node of side (the voter
// with as many others as make a majority with it) that leads vote.Term,
// which it could only with the voter's vote.
func secondVotesIn(ctx context.Context, c *Cluster, vote voteSeen, side []string) ([]string, error) {
	if c.Events != nil {
		votes, err := votesOf(ctx, c, vote.Node, vote.Term)
		if err != nil {
			return nil, err
		}
		return without(votes, vote.For), nil
	}
	st, err := states(ctx, c)
	if err != nil {
		return nil, err
	}
	if s, ok := st[vote.Node]; ok && s.Term == vote.Term && s.Vote != "" && s.Vote != vote.For {
		return []string{s.Vote}, nil
	}
	for _, n := range side {
		if s, ok := st[n]; ok && n != vote.Node && n != vote.For && s.Role == db.RoleLeader && s.Term == vote.Term {
			return []string{n}, nil
		}
	}
	return []string{}, nil
}

// without is names but name, in order.
func without(names []string, name string) []string {
	out := []string{}
	for _, n := range names {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}
