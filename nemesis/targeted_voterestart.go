package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"chaos/history/faultrec"
)

// VoteRestart is the vote-restart family: a node is crashed right after it
// votes and restarted at once, and a candidate that could not have asked
// for its vote before asks for it in the same term. A node that keeps its
// promise (the vote persisted before it was sent) refuses; one that forgot
// it votes twice in a term, and two leaders may lead it.
//
// The sequence, within one Start:
//
//  1. The leader and the fewest other nodes that leave a majority
//     without them (one of five, none of three) are cut off from that
//     majority; the majority's links are slowed (DelayMS), so that between
//     a vote and the new leader's first append there is time to act.
//  2. The majority elects; the moment a node's event log shows that it
//     voted for another node in a newer term, it is killed (SIGKILL) and
//     moved to the old leader's side of the cut. A system without event
//     logs shows it in its nodes' states instead (see
//     targeted_votestates.go): a node whose term rose to that of a node
//     campaigning or leading in it voted for it, or is about to.
//  3. It is restarted as soon as the old leader stepped down (it hears
//     from no majority). The old leader's side, which never heard of that
//     term, now holds a majority with it and campaigns into the term the
//     restarted node voted in: the restarted node is asked again.
//
// The old leader's side can campaign only into the term after its own, so
// a first round of the majority that split (every vote in it a vote for
// oneself) spoils the attempt: the sequence then heals, waits for a
// leader and tries again, three times at most. Once the voter voted again
// (or five election timeouts passed), the sequence heals the cut and the
// links: nothing stays for Stop.
//
// Op "start-vote-restart": {"votes_from", "leader", "term", "minority",
// "majority", "links", "voter", "voted_for", "vote_term", "moved",
// "second_votes", "split_terms", "outcome"}: "votes_from" is where votes
// were seen ("events", or "states" for a system without event logs),
// "second_votes" the candidates the voter voted for in vote_term after the
// restart ([] on a correct node; from the states, the one it names, or the
// node of its side that leads vote_term), "outcome" why the sequence
// stopped short.
type VoteRestart struct {
	// Election is the election timeout (default: the system's,
	// Cluster.Timing); each wait of the sequence lasts 10 of them at most.
	Election time.Duration
	// DelayMS slows the majority's links during its election (default:
	// 1.6 heartbeats, delayHeartbeats, 80 ms for chaos-node): between a
	// vote and the new leader's first append to the voter there are two
	// of it to kill the voter in; more would let a second node campaign
	// before the first one's requests arrive, and split the vote.
	DelayMS float64
	// UpTimeout bounds the wait for the restarted node (default
	// DefaultUpTimeout).
	UpTimeout time.Duration
	// Pace is the sequence's clock (default: real time).
	Pace Pace

	seq sequence
}

// VoteRestartFamily is the vote-restart family's name.
const VoteRestartFamily = faultrec.NameVoteRestart

func (f *VoteRestart) Name() string { return VoteRestartFamily }

// Available needs roles (a leader and the nodes' states; event logs show
// votes best, the states do without), Remotes to kill with, a way to cut
// the network and a way to delay messages.
func (f *VoteRestart) Available(ctx context.Context, c *Cluster) error {
	if err := requireRoles(VoteRestartFamily, c, true, false); err != nil {
		return err
	}
	if err := requireRemotes(VoteRestartFamily, c); err != nil {
		return err
	}
	if err := cutAvailable(ctx, c); err != nil {
		return wrapFamily(VoteRestartFamily, err)
	}
	p := &Packet{Behavior: PacketBehavior{DelayMS: sequenceDelayMS(c, f.DelayMS)}}
	return wrapFamily(VoteRestartFamily, p.Available(ctx, c))
}

// Start runs the sequence; see VoteRestart.
func (f *VoteRestart) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	s := f.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	misses, err := everyNodeAnswers(ctx, c, f.Pace, s.UpTimeout)
	if err != nil {
		return Op{}, wrapFamily(VoteRestartFamily, err)
	}
	v, err := s.begin()
	if err != nil {
		return Op{}, err
	}
	v.ProbeMisses = misses
	v.VotesFrom = votesFrom(c)
	var splits []uint64
	for attempt := 1; ; attempt++ {
		cut, vote, err := f.election(ctx, c, v, rng)
		switch {
		case err != nil || vote == nil:
			return s.op(err)
		case vote.Term != cut.term+1 && attempt < voteAttempts:
			// The majority's first round split: the leader's side, a term
			// behind, cannot campaign into this one. Heal, and again.
			splits = append(splits, vote.Term)
			v.SplitTerms = splits
			if ok, err := f.settle(ctx, c, vote.Term); err != nil || !ok {
				v.Outcome = "no leader after a split election"
				return s.op(err)
			}
			continue
		}
		v.Voter, v.VotedFor, v.VoteTerm = vote.Node, vote.For, new(vote.Term)
		return s.finish(ctx, c, f.crashVoter(ctx, c, v, cut.minority, cut.majority, *vote))
	}
}

// voteAttempts bounds the elections a vote-restart provokes to find one
// whose first round did not split.
const voteAttempts = 3

// voteSides is how one attempt cut the cluster.
type voteSides struct {
	term               uint64
	minority, majority []string
}

// election slows the links of a majority without the leader, cuts it off
// from the leader's side, and waits for a node of the majority to vote for
// another; a nil vote (and "outcome" in v) when none did in time.
func (f *VoteRestart) election(ctx context.Context, c *Cluster, v *faultrec.Targeted, rng *rand.Rand) (voteSides, *voteSeen, error) {
	s := &f.seq
	leader, term, err := leaderAndTerm(ctx, c, f.Pace, f.Election)
	if err != nil {
		v.Outcome = "no leader"
		return voteSides{}, nil, err
	}
	minority, majority := splitAround(c, leader, rng)
	v.Leader, v.Term, v.Minority, v.Majority = leader, new(term), minority, majority
	// The links slow down first: the majority's election must not begin
	// before they are.
	if err := s.degrade(ctx, c, PacketBehavior{DelayMS: sequenceDelayMS(c, f.DelayMS)}, amongLinks(majority)); err != nil {
		return voteSides{}, nil, err
	}
	if err := s.cut.set(ctx, c, sides(minority, majority)); err != nil {
		return voteSides{}, nil, err
	}
	vote, found, err := f.awaitVote(ctx, c, majority, term)
	if err != nil || !found {
		v.Outcome = "no vote seen"
		return voteSides{}, nil, err
	}
	return voteSides{term: term, minority: minority, majority: majority}, &vote, nil
}

// settle heals the cut and the links and waits until a node leads a term
// at least term.
func (f *VoteRestart) settle(ctx context.Context, c *Cluster, term uint64) (bool, error) {
	s := &f.seq
	if err := errors.Join(s.cut.stop(ctx, c), s.stopLinks(ctx, c)); err != nil {
		return false, err
	}
	return f.Pace.until(ctx, 10*electionOf(c, f.Election), pollEvery, func() (bool, error) {
		st, err := states(ctx, c)
		if err != nil {
			return false, err
		}
		leader, _ := leaderAmong(st, partitionNames(c.Nodes), term-1)
		return leader != "", nil
	})
}

// crashVoter kills the voter, moves it to the minority's side, restarts
// it, and watches whether it votes again in the term of its vote.
func (f *VoteRestart) crashVoter(ctx context.Context, c *Cluster, v *faultrec.Targeted, minority, majority []string, vote voteSeen) error {
	s := &f.seq
	if err := s.kill(ctx, c, vote.Node); err != nil {
		return err
	}
	moved := append(slices.Clone(minority), vote.Node)
	rest := slices.DeleteFunc(slices.Clone(majority), func(n string) bool { return n == vote.Node })
	v.Moved = moved
	if err := s.cut.set(ctx, c, sides(moved, rest), vote.Node); err != nil {
		return err
	}
	if err := f.awaitNoLeader(ctx, c, minority, vote.Term); err != nil {
		return err
	}
	if err := s.restartNode(ctx, c, vote.Node); err != nil {
		return err
	}
	if err := s.cut.set(ctx, c, sides(moved, rest)); err != nil {
		return err
	}
	second := []string{}
	_, err := f.Pace.until(ctx, secondVoteWithin*electionOf(c, f.Election), pollEvery, func() (bool, error) {
		votes, err := secondVotesIn(ctx, c, vote, moved)
		if err != nil {
			return false, nil // not answering yet
		}
		second = votes
		return len(second) > 0, nil
	})
	v.SecondVotes = second
	if len(second) == 0 {
		v.Outcome = "no second vote seen"
	}
	return err
}

// secondVoteWithin is how many election timeouts the sequence watches the
// restarted voter for a second vote. The old leader's side has no leader
// by then (see awaitNoLeader): its next campaign comes within two election
// timeouts (an election timer, then the pre-vote's round trip), and the
// voter, up again, is asked in it; five leave room for a round that split.
// On a correct node no vote comes, and the whole wait is spent.
const secondVoteWithin = 5

// awaitNoLeader waits, three election timeouts at most, until no node of
// side leads a term before term: the old leader stepped down (it cannot
// hear from a majority) and its election timer runs. The voter restarts
// only then, so that the old leader's side most often campaigns first,
// into the voter's term; a voter restarted while the old leader still
// leads answers its heartbeats with the newer term and campaigns itself
// as often as not, into a term after its vote.
func (f *VoteRestart) awaitNoLeader(ctx context.Context, c *Cluster, side []string, term uint64) error {
	_, err := f.Pace.until(ctx, 3*electionOf(c, f.Election), pollEvery, func() (bool, error) {
		st, err := states(ctx, c)
		if err != nil {
			return false, nil // not answering: no verdict yet
		}
		for _, n := range side {
			if s, ok := st[n]; ok && s.Role == RoleLeader && s.Term < term {
				return false, nil
			}
		}
		return true, nil
	})
	return err
}

// awaitVote waits until a node of majority votes for another node in a
// term after term.
func (f *VoteRestart) awaitVote(ctx context.Context, c *Cluster, majority []string, term uint64) (voteSeen, bool, error) {
	var vote voteSeen
	found, err := f.Pace.until(ctx, 10*electionOf(c, f.Election), pollEvery, func() (bool, error) {
		var ok bool
		var err error
		vote, ok, err = findVoteIn(ctx, c, majority, term)
		return ok, err
	})
	return vote, found, err
}

// Stop restarts the voter if it is still down and heals the cut.
func (f *VoteRestart) Stop(ctx context.Context, c *Cluster) (Op, error) {
	return f.state().stop(ctx, c)
}

// Heal restarts the node this value killed and removes every cut and hook
// network fault of the targeted faults.
func (f *VoteRestart) Heal(ctx context.Context, c *Cluster) error { return f.state().heal(ctx, c) }

func (f *VoteRestart) state() *sequence {
	return f.seq.setup(VoteRestartFamily, f.UpTimeout)
}

// leaderAndTerm waits for a steady leader (see awaitLeader), and returns
// it and its term, as its state reports it (the highest term any node
// reports, when the leader's own state is missing).
func leaderAndTerm(ctx context.Context, c *Cluster, p Pace, election time.Duration) (string, uint64, error) {
	leader, err := awaitLeader(ctx, c, p, election)
	if err != nil {
		return "", 0, err
	}
	st, err := states(ctx, c)
	if err != nil {
		return "", 0, err
	}
	if s, ok := st[leader]; ok {
		return leader, s.Term, nil
	}
	var term uint64
	for _, s := range st {
		term = max(term, s.Term)
	}
	return leader, term, nil
}

// splitAround returns the leader with the fewest other nodes, drawn with
// rng, that leave a majority without them, and that majority; both in c's
// order.
func splitAround(c *Cluster, leader string, rng *rand.Rand) (minority, majority []string) {
	rest := others(c, leader)
	k := len(c.Nodes) - (len(c.Nodes)/2 + 1) - 1
	picked := rng.Perm(len(rest))[:k]
	for _, n := range partitionNames(c.Nodes) {
		i := slices.Index(rest, n)
		if n == leader || (i >= 0 && slices.Contains(picked, i)) {
			minority = append(minority, n)
		} else {
			majority = append(majority, n)
		}
	}
	return minority, majority
}

// amongLinks are the links from every node of nodes to every other.
func amongLinks(nodes []string) PacketLinks {
	links := PacketLinks{}
	for _, n := range nodes {
		links[n] = slices.DeleteFunc(slices.Clone(nodes), func(m string) bool { return m == n })
	}
	return links
}

// OneShot: a sequence that succeeded leaves nothing for Stop.
func (f *VoteRestart) OneShot() {}
