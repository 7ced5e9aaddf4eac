package nemesis

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"chaos/db"
	"chaos/history/faultrec"
)

// Figure8 is the figure8 family: the sequence of Figure 8 of the Raft
// paper, which shows why a leader must not commit an entry of an earlier
// term by counting its replicas.
//
//  1. The leader L (term t) is cut off alone; the entries it appends for
//     its clients meanwhile, and for a few writes the sequence sends it
//     (of a key of its own), are on L only. Every link is slowed (DelayMS),
//     so that the steps below land between a message and its answer.
//  2. The others elect a leader X (term t' > t); the moment X leads, X is
//     cut off alone in turn, its first entry, at the index of L's first
//     lone entry, on X only.
//  3. L rejoins the others and is elected (term t” > t'); it replicates
//     its old entries. The moment L's commit index reaches its first lone
//     entry, L is cut off again and X rejoins the others (but for the
//     bystanders with the longest logs, cut off with L, so that X needs
//     and gets the others' votes: see finalSides). A leader that
//     committed that entry of term t by counting replicas, before any
//     entry of its own term was on a majority, has applied an entry that
//     X (its log ends in t' > t) can now win an election and overwrite.
//
// During step 3 the bystanders (neither L nor X) run on slow clocks
// (favourRate, through the clock hooks or the vdso patch), so that L times out first and
// wins the election the sequence needs; any of the bystanders could win
// otherwise. For X's election they run true again: with X's log ahead of
// theirs none of them can win it, and slow they would remember L for ten
// election timeouts before they vote. A system without fault hooks or a
// vdso clock keeps its clocks, and the sequence runs all the same, with
// less chance of the elections it needs ("slow_clocks" in its op says so).
//
// On a correct node L commits the old entries only with an entry of t”
// on a majority, which X can then never win against. The sequence ends,
// once the others elected a leader without L (or ten election timeouts
// passed), by healing the cut and the links and resetting the clocks:
// nothing stays for Stop.
//
// Op "start-figure8": {"leader", "term", "lone_writes", "index", "lone_entries",
// "second_leader", "second_term", "reelected_term", "commit",
// "cut_with_leader", "final_leader", "split_appends", "links", "cut",
// "outcome"}. Where the system has no fault hooks, "append_limit" and
// "slow_clocks" say "unavailable: no fault hooks" (and "split_appends"
// is absent); indexes are the last log index
// where the nodes report it, else their commit index (etcd).
//
// Before step 1 every node with fault hooks is asked to send one entry per
// append message, and one append at a time to each follower (chaos-node's
// append limit hook; put back when the sequence ends). Otherwise L's first
// append after step 3 carries its old entries and the entry of its new
// term together, their acknowledgement covers both, and a leader with the
// planted commit-old-term bug commits exactly what a correct one does; and
// with appends pipelined, the entry of L's new term reaches the others
// right behind the old ones, before the cut of step 3 can land, and X
// then cannot win. Nodes without hooks keep their own batching: the
// sequence still runs, partitions and writes, and a bug that commits an
// old term's entries may still show where the batching splits them.
type Figure8 struct {
	// Election is the election timeout (default: the system's,
	// Cluster.Timing); each wait of the sequence lasts 10 of them at most.
	Election time.Duration
	// DelayMS slows every link for the sequence (default: 1.6 heartbeats,
	// delayHeartbeats, 80 ms for chaos-node): long enough for the cuts of
	// steps 2 and 3 to land between a message and its answer (the sequence
	// sees a leader, or a commit, within a few tens of milliseconds),
	// short enough that the elections it waits for do not split the vote
	// round after round on a correct node.
	DelayMS float64
	// Pace is the sequence's clock (default: real time).
	Pace Pace

	seq sequence
}

// Figure8Family is the figure8 family's name.
const Figure8Family = faultrec.NameFigure8

func (f *Figure8) Name() string { return Figure8Family }

// Available needs roles (a leader and the nodes' states), a way to cut
// the network and a way to slow links; fault hooks (the append limit, the
// bystanders' slow clocks) serve where there are some.
func (f *Figure8) Available(ctx context.Context, c *Cluster) error {
	if err := requireRoles(Figure8Family, c, true, false); err != nil {
		return err
	}
	if err := cutAvailable(ctx, c); err != nil {
		return wrapFamily(Figure8Family, err)
	}
	p := &Packet{Behavior: PacketBehavior{DelayMS: sequenceDelayMS(c, f.DelayMS)}}
	return wrapFamily(Figure8Family, p.Available(ctx, c))
}

// Start runs the sequence; see Figure8.
func (f *Figure8) Start(ctx context.Context, c *Cluster, _ *rand.Rand) (Op, error) {
	s := f.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	misses, err := everyNodeAnswers(ctx, c, f.Pace, s.UpTimeout)
	if err != nil {
		return Op{}, wrapFamily(Figure8Family, err)
	}
	leader, term, err := leaderAndTerm(ctx, c, f.Pace, f.Election)
	if err != nil {
		return Op{}, wrapFamily(Figure8Family, err)
	}
	v, err := s.begin()
	if err != nil {
		return Op{}, err
	}
	v.ProbeMisses = misses
	all := partitionNames(c.Nodes)
	rest := others(c, leader)
	v.Leader, v.Term = leader, new(term)
	if err := s.splitAppends(ctx, c); err != nil {
		return s.op(err)
	}
	if err := s.degrade(ctx, c, PacketBehavior{DelayMS: sequenceDelayMS(c, f.DelayMS)}, amongLinks(all)); err != nil {
		return s.op(err)
	}
	if err := s.cut.set(ctx, c, grudgeIsolate(all, leader)); err != nil {
		return s.op(err)
	}
	f.appendAlone(ctx, c, v, leader)
	return s.finish(ctx, c, f.play(ctx, c, v, leader, term, rest))
}

// loneWrites is how many writes the sequence sends the cut-off leader
// itself: step 1 needs entries of L's term on L alone, whatever the
// clients do in the moment L still leads (their next operations may be
// reads, or wait on a timeout).
const loneWrites = 3

// loneWriteWait bounds the wait for those writes' answers, which cannot
// come (L cannot commit them): each is appended by the time it is given
// up.
const loneWriteWait = 200 * time.Millisecond

// figure8Key is the key of the sequence's own writes, which no workload
// uses, so no client's history holds them.
const figure8Key = "chaos-figure8"

// appendAlone sends the cut-off leader loneWrites writes of figure8Key
// through the system's own client (Cluster.Write), at once, and gives
// their answers up after loneWriteWait; "lone_writes" records how many it
// sent. Without a client (Cluster.Write nil) it sends none, and
// "lone_writes" says so: the clients' own writes may still land there.
func (f *Figure8) appendAlone(ctx context.Context, c *Cluster, v *faultrec.Targeted, leader string) {
	if c.Write == nil {
		v.LoneWrites = &faultrec.CountOr{Reason: "unavailable: no client"}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, loneWriteWait)
	defer cancel()
	var wg sync.WaitGroup
	for range loneWrites {
		// The same value each time: the writes are entries, not data.
		wg.Go(func() { _ = c.Write(ctx, leader, figure8Key, 0) })
	}
	wg.Wait()
	v.LoneWrites = &faultrec.CountOr{Count: loneWrites}
}

// play runs steps 2 and 3 once the leader is cut off.
func (f *Figure8) play(ctx context.Context, c *Cluster, v *faultrec.Targeted, leader string, term uint64, rest []string) error {
	p := &figure8Play{f: f, c: c, v: v, leader: leader, rest: rest}
	second, secondTerm, err := p.secondLeader(ctx, term)
	if err != nil || second == "" {
		return err
	}
	bystanders := slices.DeleteFunc(slices.Clone(rest), func(n string) bool { return n == second })
	rejoined := append([]string{leader}, bystanders...)
	if err := f.seq.cut.set(ctx, c, sides(rejoined, []string{second})); err != nil {
		return err
	}
	if err := f.slow(ctx, c, v, bystanders); err != nil {
		return err
	}
	reelected, err := p.reelect(ctx, secondTerm)
	if err != nil || reelected == 0 {
		return err
	}
	voters, away := finalSides(p.st, second, bystanders, len(c.Nodes))
	if len(away) > 0 {
		v.CutWithLeader = away
	}
	if err := f.seq.cut.set(ctx, c, sides(voters, append([]string{leader}, away...))); err != nil {
		return err
	}
	// The bystanders' clocks run true again: on second's side none of
	// them can win (second, whose log ends in a term above L's old
	// entries, refuses them its vote, and they are one short of a majority
	// without it), and slow they would remember L ten election timeouts
	// before they grant second their votes.
	if err := f.seq.resetSlowed(ctx, c, bystanders); err != nil {
		return err
	}
	return p.finalLeader(ctx, reelected)
}

// figure8Play is one play of steps 2 and 3: the first leader cut off, the
// others (rest), and the node states last seen (st), which each wait
// refreshes.
type figure8Play struct {
	f      *Figure8
	c      *Cluster
	v      *faultrec.Targeted
	leader string
	rest   []string
	st     map[string]db.NodeState
}

// The elections of steps 3 and 4 first wait out the bystanders' memory of
// the last leader on their slow clocks (ten election timeouts at
// favourRate), then a few rounds of the favoured node's campaigns.
func (p *figure8Play) within() time.Duration     { return 10 * electionOf(p.c, p.f.Election) }
func (p *figure8Play) slowWithin() time.Duration { return 16 * electionOf(p.c, p.f.Election) }

// until polls the node states until done says so, within d.
func (p *figure8Play) until(ctx context.Context, d time.Duration, done func() bool) error {
	_, err := p.f.Pace.until(ctx, d, pollEvery, func() (bool, error) {
		st, err := states(ctx, p.c)
		if err != nil {
			return false, err
		}
		p.st = st
		return done(), nil
	})
	return err
}

// secondLeader waits for a leader among the others in a term above term
// (step 2), and records it with the index its lone entries start at; ""
// with the outcome recorded when none comes.
func (p *figure8Play) secondLeader(ctx context.Context, term uint64) (string, uint64, error) {
	second, secondTerm := "", uint64(0)
	before := map[string]uint64{} // each node's last index before it led
	err := p.until(ctx, p.within(), func() bool {
		for _, n := range p.rest {
			if s, ok := p.st[n]; ok && s.Role != RoleLeader {
				before[n] = s.LogEnd()
			}
		}
		second, secondTerm = leaderAmong(p.st, p.rest, term)
		return second != ""
	})
	if err != nil || second == "" {
		p.v.Outcome = "no second leader"
		return "", 0, err
	}
	index := loneIndex(p.st, second, p.rest)
	if last, ok := before[second]; ok {
		// X's log is frozen from the cut until it leads: its first entry
		// of t' comes right after it, whatever the others hold.
		index = max(index, last+1)
	}
	p.v.SecondLeader, p.v.SecondTerm, p.v.Index = second, new(secondTerm), new(index)
	p.v.LoneEntries = new(uint64(0))
	if last := p.st[p.leader].LogEnd(); last >= index {
		p.v.LoneEntries = new(last - index + 1)
	}
	return second, secondTerm, nil
}

// reelect waits for the first leader to lead again in a term above
// secondTerm with its lone entries committed, and returns that term; 0
// with the outcome recorded when it does not (not re-elected, or
// re-elected without committing them: "reelected_term" and "commit" say
// how far it came).
func (p *figure8Play) reelect(ctx context.Context, secondTerm uint64) (uint64, error) {
	var reelected uint64
	err := p.until(ctx, p.slowWithin(), func() bool {
		ls := p.st[p.leader]
		if ls.Role == RoleLeader && ls.Term > secondTerm {
			reelected = ls.Term
		}
		return reelected > 0 && ls.Commit >= *p.v.Index
	})
	if err != nil || reelected == 0 {
		p.v.Outcome = "the first leader was not elected again"
		return 0, err
	}
	p.v.ReelectedTerm, p.v.Commit = new(reelected), new(p.st[p.leader].Commit)
	if p.st[p.leader].Commit < *p.v.Index {
		// Re-elected, but its commit index never reached its old entries:
		// the last step would test nothing.
		p.v.Outcome = "the first leader did not commit its lone entries"
		return 0, nil
	}
	return reelected, nil
}

// finalLeader waits for a leader among the others in a term above
// reelected (step 4), and records it.
func (p *figure8Play) finalLeader(ctx context.Context, reelected uint64) error {
	final := ""
	err := p.until(ctx, p.slowWithin(), func() bool {
		final, _ = leaderAmong(p.st, p.rest, reelected)
		return final != ""
	})
	if final != "" {
		p.v.FinalLeader = final
	}
	return err
}

// finalSides splits the nodes for the last election of the sequence
// (Figure 8 (d)): second with just enough bystanders for a majority, and
// the bystanders left over, which go to the cut-off leader's side. With
// five nodes the three bystanders are a majority of their own: whichever
// of them times out first once its memory of L fades (on its slow clock,
// the same moment second's pre-votes start to be granted) wins with the
// others' votes, and nothing is overwritten; so the bystanders with the
// longest logs (the likeliest to hold L's entry of its new term, which
// would make them refuse second) are cut off with L, and second needs,
// and gets, the votes of the others, whose logs end below its own. With
// three nodes the one bystander stays.
func finalSides(st map[string]db.NodeState, second string, bystanders []string, nodes int) (voters, away []string) {
	keep := nodes / 2 // with second, a majority
	byLog := slices.Clone(bystanders)
	slices.SortStableFunc(byLog, func(a, b string) int { return cmp.Compare(st[a].LogEnd(), st[b].LogEnd()) })
	if keep > len(byLog) {
		keep = len(byLog)
	}
	return append([]string{second}, byLog[:keep]...), byLog[keep:]
}

// favourRate is the clock rate of the nodes that should not win the next
// election: their election timers, and their memory of the last leader
// (CheckQuorum), last ten times longer than the favoured node's, which
// times out first, again and again, and asks for their votes. Without it
// any of them may win, as likely as the node the sequence needs.
const favourRate = 0.1

// slow sets the clocks of nodes to favourRate: through their clock hooks,
// else through the vdso patch where the hosts allow it (a Go system's
// timers then run slow too: they wait on its clock's readings, again and
// again); without either, "slow_clocks" in v says why not.
func (f *Figure8) slow(ctx context.Context, c *Cluster, v *faultrec.Targeted, nodes []string) error {
	set := f.seq.setRate
	if c.Hooks == nil {
		if err := vdsoAvailable(ctx, c); err != nil {
			v.SlowClocks = noSlowClocks
			return nil
		}
		set = f.seq.setVDSORate
	}
	for _, n := range nodes {
		if _, err := set(ctx, c, n, favourRate); err != nil {
			return err
		}
	}
	return nil
}

// noSlowClocks is "slow_clocks" on a system whose clocks figure8 cannot
// slow: no fault hooks, and no vdso clock on its hosts.
const noSlowClocks = "unavailable: no fault hooks or vdso clock"

// loneIndex is the first index that the cut-off leader may hold alone:
// one past the longest log of rest, leaving out the new leader second,
// whose first entry of its term is there or, when second's log was longer
// than the others', further on.
func loneIndex(st map[string]db.NodeState, second string, rest []string) uint64 {
	var longest uint64
	for _, n := range rest {
		if n != second {
			longest = max(longest, st[n].LogEnd())
		}
	}
	return longest + 1
}

// Stop heals the cut and the links.
func (f *Figure8) Stop(ctx context.Context, c *Cluster) (Op, error) { return f.state().stop(ctx, c) }

// appendLimitHealer is figure8 for chaos heal: its Heal puts back every
// node's append limit, all that figure8 leaves which the random families'
// heals do not remove.
type appendLimitHealer struct{ Figure8 }

// Heal resets the append limit hook of every node that has fault hooks.
func (h *appendLimitHealer) Heal(ctx context.Context, c *Cluster) error {
	s := h.state()
	s.mu.Lock()
	defer s.mu.Unlock()
	return wrapFamily(Figure8Family, s.resetAppends(ctx, c, partitionNames(c.Nodes)))
}

// Heal removes every cut and link fault of the targeted faults.
func (f *Figure8) Heal(ctx context.Context, c *Cluster) error { return f.state().heal(ctx, c) }

func (f *Figure8) state() *sequence { return f.seq.setup(Figure8Family, 0) }

// OneShot: a sequence that succeeded leaves nothing for Stop.
func (f *Figure8) OneShot() {}
