package raft

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
)

// simConfig is one simulated cluster and the faults it suffers. Every field
// is derived from the seed, so a seed replays a run exactly.
type simConfig struct {
	seed          uint64
	nodes         int
	faultTicks    int // ticks of random faults
	recoverTicks  int // liveness bound: ticks after the faults stop
	electionTick  int
	heartbeatTick int
	preVote       bool
	checkQuorum   bool
	readMode      ReadOnlyOption
	maxMsgBytes   uint64
	compactEvery  uint64 // compact when this many entries were applied since the snapshot; 0 never
	proposeRate   float64
	readRate      float64
	dropRate      float64
	dupRate       float64
	maxDelay      int
	crashRate     float64 // per tick
	partitionRate float64 // per tick
	transferRate  float64 // per tick: the leader hands off leadership
	voteCrashRate float64 // per granted vote: the voter crashes right after sending it
	// fastFailover tells every live node of a crash (PeerLost, 0 to 2
	// ticks later, while the crashed node's messages may still be in
	// flight), as a transport sees the connection reset; spuriousLostRate
	// (per tick) tells one follower that its live leader's connection
	// ended.
	fastFailover     bool
	spuriousLostRate float64
	// spares are nodes beyond the first nodes that start outside the
	// cluster (Config.Join); confChangeRate (per tick) is how often the
	// leader adds one as a learner, promotes a learner, or removes a
	// voter. A removed node stays out, running, and is never added again.
	spares         int
	confChangeRate float64
	// applyEarly: committed entries below a Ready's new ones are applied
	// before it is persisted, as chaos-node does (see Ready).
	applyEarly bool
	bugs       Bugs
}

// randomSimConfig draws a fault profile from seed.
func randomSimConfig(seed uint64, bugs Bugs) simConfig {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	c := simConfig{
		seed:          seed,
		nodes:         []int{3, 5, 5}[rng.IntN(3)],
		faultTicks:    400 + rng.IntN(400),
		recoverTicks:  400,
		electionTick:  10,
		heartbeatTick: 1 + rng.IntN(2),
		preVote:       rng.IntN(4) != 0,
		checkQuorum:   rng.IntN(4) != 0,
		maxMsgBytes:   []uint64{8, 1 << 20}[rng.IntN(2)],
		compactEvery:  []uint64{0, 8, 40}[rng.IntN(3)],
		proposeRate:   pick(0.1, 0.5, 1),
		readRate:      pick(0, 0.1, 0.5),
		dropRate:      pick(0, 0.01, 0.05, 0.2),
		dupRate:       pick(0, 0.01, 0.05),
		maxDelay:      []int{1, 2, 3, 6}[rng.IntN(4)],
		crashRate:     pick(0, 0.003, 0.01, 0.03),
		partitionRate: pick(0, 0.005, 0.02),
		transferRate:  pick(0, 0.002),
		voteCrashRate: pick(0, 0.3),
		bugs:          bugs,
	}
	if c.checkQuorum && rng.IntN(3) == 0 {
		c.readMode = ReadLeaseBased
	}
	// From a stream of its own, so that the profiles above stay what they
	// were for every seed.
	fast := rand.New(rand.NewPCG(seed, 0xfa57))
	c.fastFailover = fast.IntN(2) == 0
	if c.fastFailover {
		c.spuriousLostRate = []float64{0, 0.01, 0.05}[fast.IntN(3)]
	}
	if rng.IntN(3) == 0 {
		// A storm: leaders crash and get cut off faster than they can
		// replicate, one entry per message, and elections run without
		// PreVote. This is where the Figure 8 histories (section 5.4.2) come from.
		c.nodes, c.maxMsgBytes, c.proposeRate, c.preVote = 3, 8, 1, false
		c.crashRate, c.partitionRate = 0.03, 0.04
		c.dropRate, c.maxDelay = 0.2, 3+rng.IntN(4)
	}
	// Applying ahead of persisting, from a stream of its own too.
	c.applyEarly = rand.New(rand.NewPCG(seed, 0xa5c)).IntN(2) == 0
	// Membership churn, also from a stream of its own. A node removed
	// before it learns of it campaigns on: only PreVote or CheckQuorum keep
	// it from deposing leader after leader (doc.go), so churn needs one.
	churn := rand.New(rand.NewPCG(seed, 0xc4a9))
	if (bugs.ConfChangeEarly || churn.IntN(2) == 0) && (c.preVote || c.checkQuorum) {
		c.spares = 1 + churn.IntN(3)
		c.confChangeRate = []float64{0.01, 0.03, 0.1}[churn.IntN(3)]
		if bugs.ConfChangeEarly {
			// Changes in quick succession, so that two are in flight.
			c.spares, c.confChangeRate = 3, 0.2
		}
	}
	return c
}

func (c simConfig) String() string {
	return fmt.Sprintf("nodes=%d ticks=%d prevote=%v checkquorum=%v read=%d maxmsg=%d compact=%d drop=%.2f dup=%.2f delay<=%d crash=%.3f partition=%.3f fast=%v/%.2f spares=%d/%.2f early=%v bugs=%v",
		c.nodes, c.faultTicks, c.preVote, c.checkQuorum, c.readMode, c.maxMsgBytes, c.compactEvery,
		c.dropRate, c.dupRate, c.maxDelay, c.crashRate, c.partitionRate, c.fastFailover, c.spuriousLostRate,
		c.spares, c.confChangeRate, c.applyEarly, c.bugs.Names())
}

// simDisk is what a node made durable: its hard state, newest snapshot and
// the entries after it, with the log-matching chain hash of each entry.
type simDisk struct {
	hs        HardState
	snap      *Snapshot
	snapChain uint64
	ents      []Entry
	chain     []uint64
}

// simNode is one member: its core (nil while crashed), disk and state machine.
type simNode struct {
	id        uint64
	rn        *RawNode
	downUntil int
	restarts  int
	// retired: its removal from the configuration committed, and it was
	// shut down for good, as an operator does.
	retired bool
	disk    simDisk
	// The state machine is a chain hash of every applied entry: two nodes
	// applied the same commands up to index exactly when their chains match.
	smIndex uint64
	smChain uint64
	// commitChecked is the highest commit index of this node's leadership
	// of commitTerm that checkCommitDurable verified.
	commitChecked, commitTerm uint64
}

type appliedEntry struct {
	term  uint64
	chain uint64
	node  uint64
}

type pendingRead struct {
	node     uint64
	minIndex uint64 // every entry applied anywhere before the read was issued
}

// simulation runs one seeded cluster and checks the Raft invariants after
// every step.
type simulation struct {
	cfg   simConfig
	rng   *rand.Rand
	now   int
	net   *simNetwork
	nodes []*simNode

	leaders    map[uint64]uint64    // term -> leader (Election Safety)
	logChain   map[[2]uint64]uint64 // (index, term) -> chain hash (Log Matching)
	applied    map[uint64]appliedEntry
	maxApplied uint64
	reads      map[uint64]pendingRead
	nextCtx    uint64
	nextCmd    uint64

	partitionUntil int
	lost           []lostConn // PeerLost notices not yet delivered
	lostRng        *rand.Rand // draws the notices' delays and victims
	orderRng       *rand.Rand // draws whether a leader sends before it writes, and crashes between
	healed         bool
	marker         []byte          // the liveness probe command, once faults stopped
	markerRetry    int             // no new proposal of the probe before this tick
	markerIndex    uint64          // where the probe committed; 0 until applied somewhere
	everMember     map[uint64]bool // nodes that were ever in a configuration
	churnRng       *rand.Rand      // draws the membership changes
	fwdRng         *rand.Rand      // draws which followers' proposals are forwarded

	trace   []string
	verbose bool
	err     error
}

func newSimulation(cfg simConfig) *simulation {
	rng := rand.New(rand.NewPCG(cfg.seed, 1))
	s := &simulation{
		cfg: cfg,
		rng: rng,
		net: &simNetwork{rng: rand.New(rand.NewPCG(cfg.seed, 2)), cut: map[[2]uint64]bool{},
			dropRate: cfg.dropRate, dupRate: cfg.dupRate, minDelay: 1, maxDelay: cfg.maxDelay},
		leaders:    map[uint64]uint64{},
		logChain:   map[[2]uint64]uint64{},
		applied:    map[uint64]appliedEntry{},
		reads:      map[uint64]pendingRead{},
		lostRng:    rand.New(rand.NewPCG(cfg.seed, 3)),
		orderRng:   rand.New(rand.NewPCG(cfg.seed, 4)),
		churnRng:   rand.New(rand.NewPCG(cfg.seed, 5)),
		fwdRng:     rand.New(rand.NewPCG(cfg.seed, 6)),
		everMember: map[uint64]bool{},
	}
	for i := 1; i <= cfg.nodes+cfg.spares; i++ {
		s.nodes = append(s.nodes, &simNode{id: uint64(i)})
		s.everMember[uint64(i)] = i <= cfg.nodes
	}
	for _, n := range s.nodes {
		s.start(n)
	}
	return s
}

// peers returns every node's ID, spares included.
func (s *simulation) peers() []uint64 {
	ids := make([]uint64, len(s.nodes))
	for i, n := range s.nodes {
		ids[i] = n.id
	}
	return ids
}

// initial returns the voters the cluster starts with.
func (s *simulation) initial() []uint64 { return s.peers()[:s.cfg.nodes] }

func (s *simulation) raftConfig(n *simNode) Config {
	return Config{
		ID: n.id, Peers: s.initial(), Join: n.id > uint64(s.cfg.nodes), ElectionTick: s.cfg.electionTick, HeartbeatTick: s.cfg.heartbeatTick,
		Seed: s.cfg.seed*1000 + uint64(n.restarts), PreVote: s.cfg.preVote, CheckQuorum: s.cfg.checkQuorum,
		ReadOnly: s.cfg.readMode, MaxMsgBytes: s.cfg.maxMsgBytes, MaxInflightMsgs: 8, Bugs: s.cfg.bugs,
	}
}

// start boots n from its disk, as a process restart would.
func (s *simulation) start(n *simNode) {
	st := State{HardState: n.disk.hs, Snapshot: n.disk.snap, Entries: slices.Clone(n.disk.ents)}
	rn, err := NewRawNode(s.raftConfig(n), st)
	if err != nil {
		s.failf("restart of node %d from its disk: %v", n.id, err)
		return
	}
	n.rn = rn
	n.smIndex, n.smChain = 0, 0
	if n.disk.snap != nil {
		n.smIndex, n.smChain = n.disk.snap.Meta.Index, n.disk.snapChain
	}
}

func (s *simulation) failf(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("tick %d: "+format, append([]any{s.now}, args...)...)
		s.logf("VIOLATION: %v", s.err)
	}
}

func (s *simulation) logf(format string, args ...any) {
	line := fmt.Sprintf("%5d  ", s.now) + fmt.Sprintf(format, args...)
	if s.verbose {
		fmt.Println(line)
	}
	s.trace = append(s.trace, line)
	if len(s.trace) > 400 {
		s.trace = s.trace[len(s.trace)-200:]
	}
}

// chainHash extends a chain hash by one entry.
func chainHash(prev, term uint64, data []byte) uint64 {
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], prev)
	binary.LittleEndian.PutUint64(b[8:], term)
	h.Write(b[:])
	h.Write(data)
	return h.Sum64()
}

// run executes the whole simulation and returns the first violation.
func (s *simulation) run() (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.failf("panic: %v", p)
			err = s.err
		}
	}()
	end := s.cfg.faultTicks + s.cfg.recoverTicks
	for s.now = 1; s.now <= end && s.err == nil; s.now++ {
		if s.now <= s.cfg.faultTicks {
			s.injectFaults()
		} else if !s.healed {
			s.healAll()
		}
		s.step()
		if s.healed && s.probeAppliedEverywhere() == len(s.members()) {
			return nil
		}
	}
	if s.err == nil {
		s.failf("liveness: %d ticks after the faults stopped, the probe entry is applied on %d of %d members (leaders per term: %v)",
			s.cfg.recoverTicks, s.probeAppliedEverywhere(), len(s.members()), s.leaderSummary())
	}
	return s.err
}

func (s *simulation) leaderSummary() string {
	terms := make([]uint64, 0, len(s.leaders))
	for t := range s.leaders {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	var b strings.Builder
	for _, t := range terms[max(0, len(terms)-8):] {
		fmt.Fprintf(&b, "t%d:n%d ", t, s.leaders[t])
	}
	var maxTerm uint64
	for _, n := range s.nodes {
		if n.rn != nil {
			maxTerm = max(maxTerm, n.rn.Status().Term)
		}
	}
	fmt.Fprintf(&b, "(highest term now %d)", maxTerm)
	return b.String()
}

// lostConn is a PeerLost notice on its way: at tick at, node to learns
// that its connection from peer ended.
type lostConn struct {
	at       int
	to, peer uint64
}

// crashed takes n down and, with fast failover, schedules every other
// node's notice that n's connection ended.
func (s *simulation) crashed(n *simNode) {
	n.rn = nil
	if !s.cfg.fastFailover {
		return
	}
	for _, o := range s.nodes {
		if o == n {
			continue
		}
		// A connection ends after what was read from it: the notice comes
		// after n's messages to o that are still in flight.
		at := s.now + s.lostRng.IntN(3)
		for _, q := range s.net.queue {
			if q.m.From == n.id && q.m.To == o.id {
				at = max(at, q.at)
			}
		}
		s.lost = append(s.lost, lostConn{at: at, to: o.id, peer: n.id})
	}
}

// deliverLost hands out the PeerLost notices due by now.
func (s *simulation) deliverLost() {
	kept := s.lost[:0]
	for _, l := range s.lost {
		if l.at > s.now {
			kept = append(kept, l)
			continue
		}
		if n := s.nodes[l.to-1]; n.rn != nil {
			n.rn.PeerLost(l.peer)
		}
	}
	s.lost = kept
}

// step advances the whole cluster by one tick.
func (s *simulation) step() {
	for _, m := range s.net.due(s.now, nil) {
		n := s.nodes[m.To-1]
		if n.rn == nil {
			continue
		}
		if err := n.rn.Step(m); err != nil {
			s.failf("node %d rejected %v: %v", n.id, m, err)
			return
		}
		s.checkCommitDurable(n)
	}
	s.deliverLost()
	for _, n := range s.nodes {
		if n.rn != nil {
			n.rn.Tick()
		}
	}
	s.clientOps()
	for _, i := range s.rng.Perm(len(s.nodes)) {
		if n := s.nodes[i]; n.rn != nil && n.rn.HasReady() {
			s.handleReady(n)
		}
		if s.err != nil {
			return
		}
	}
	for _, n := range s.nodes {
		if n.retired && n.rn != nil {
			s.crashed(n)
		}
	}
}

// clientOps proposes commands and issues reads at random nodes.
func (s *simulation) clientOps() {
	if s.healed {
		// The probe goes to the leader, again after an election timeout
		// while it has not committed: every tick would flood a cluster
		// still draining the backlog of the fault phase.
		if n := s.leader(); n != nil && s.markerIndex == 0 && s.now >= s.markerRetry {
			if _, err := n.rn.Propose(s.marker); err == nil {
				s.markerRetry = s.now + 2*s.cfg.electionTick
			}
		}
		return
	}
	if s.rng.Float64() < s.cfg.proposeRate {
		n := s.nodes[s.rng.IntN(len(s.nodes))]
		if n.rn != nil {
			s.nextCmd++
			cmd := binary.LittleEndian.AppendUint64(nil, s.nextCmd)
			if n.rn.Status().Role == Leader {
				_, _ = n.rn.Propose(cmd)
			} else if s.fwdRng.IntN(8) == 0 {
				// A follower forwards it and the leader appends it as its
				// own; one in eight, so that the load stays near what the
				// leader alone takes: one entry a message with delays that
				// reorder appends drains little more (seed 7342 at one in
				// four falls behind for good).
				_ = n.rn.ForwardProposal(s.nextCmd, cmd)
			}
		}
	}
	if s.rng.Float64() < s.cfg.transferRate {
		// A planned hand-off, as before a restart.
		if l := s.leader(); l != nil {
			to := uint64(1 + s.rng.IntN(len(s.nodes)))
			_ = l.rn.TransferLeadership(to)
			s.logf("n%d transfers leadership to n%d", l.id, to)
		}
	}
	if s.cfg.confChangeRate > 0 && s.churnRng.Float64() < s.cfg.confChangeRate {
		s.changeMembership()
	}
	if s.rng.Float64() < s.cfg.readRate {
		n := s.nodes[s.rng.IntN(len(s.nodes))]
		if n.rn != nil {
			s.nextCtx++
			if n.rn.ReadIndex(s.nextCtx) == nil {
				s.reads[s.nextCtx] = pendingRead{node: n.id, minIndex: s.maxApplied}
			}
		}
	}
}

// changeMembership has the leader propose one change: promote a learner,
// add a node that was never a member as a learner, or remove a voter
// (itself, at times), keeping at least three: two voters that must both
// agree split their votes round after round when messages take as long as
// the timeouts differ, which says nothing about membership.
func (s *simulation) changeMembership() {
	l := s.leader()
	if l == nil {
		return
	}
	conf := l.rn.Status().Conf
	var cc ConfChange
	var fresh []uint64
	for _, n := range s.nodes {
		if !s.everMember[n.id] {
			fresh = append(fresh, n.id)
		}
	}
	switch r := s.churnRng.IntN(3); {
	case len(conf.Learners) > 0 && r == 0:
		cc = ConfChange{Type: PromoteVoter, NodeID: conf.Learners[s.churnRng.IntN(len(conf.Learners))]}
	case len(fresh) > 0 && r == 1:
		cc = ConfChange{Type: AddLearner, NodeID: fresh[s.churnRng.IntN(len(fresh))]}
	case len(conf.Voters) > 3 && r == 2:
		cc = ConfChange{Type: RemoveNode, NodeID: conf.Voters[s.churnRng.IntN(len(conf.Voters))]}
	default:
		return
	}
	index, err := l.rn.ProposeConfChange(cc)
	if err != nil {
		s.logf("n%d refuses %v: %v", l.id, cc, err)
		return
	}
	s.everMember[cc.NodeID] = true
	s.logf("n%d proposes %v at index %d", l.id, cc, index)
}

// members returns the membership the cluster settles on: the leader's, or
// while there is none, the initial voters.
func (s *simulation) members() []uint64 {
	if l := s.leader(); l != nil {
		return l.rn.Status().Conf.members()
	}
	return s.initial()
}

// probeAppliedEverywhere counts the members whose state machine covers
// the liveness probe (applied, or received in a snapshot).
func (s *simulation) probeAppliedEverywhere() int {
	if s.markerIndex == 0 {
		return 0
	}
	k := 0
	for _, id := range s.members() {
		if n := s.nodes[id-1]; n.rn != nil && n.smIndex >= s.markerIndex {
			k++
		}
	}
	return k
}

// leader returns the up node that leads in the highest term, if any.
func (s *simulation) leader() *simNode {
	var best *simNode
	for _, n := range s.nodes {
		if n.rn == nil {
			continue
		}
		st := n.rn.Status()
		if st.Role == Leader && (best == nil || st.Term > best.rn.Status().Term) {
			best = n
		}
	}
	return best
}
