package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/history/faultrec"
)

// memberDB is a system with a membership: it keeps the voters, the
// learners and which nodes run, logs every call, and refuses what the
// script says (refuse[call] counts the refusals left).
type memberDB struct {
	db.DB
	mu       sync.Mutex
	voters   []string
	learners []string
	down     map[string]bool
	refuse   map[string]int
	calls    []string
	stale    int  // answers to Members that leave n3 out, as a lagging node's
	noQuorum bool // Members answers as a node without a leader in a cluster most of whose nodes are down
}

func newMemberDB() *memberDB {
	return &memberDB{DB: &db.ChaosNode{Nodes: threeNodes}, voters: []string{"n1", "n2", "n3"},
		down: map[string]bool{}, refuse: map[string]int{}}
}

var threeNodes = []db.Node{{Name: "n1", Addr: "10.0.0.1"}, {Name: "n2", Addr: "10.0.0.2"}, {Name: "n3", Addr: "10.0.0.3"}}

// call logs a call and says whether the script refuses it.
func (d *memberDB) call(format string, args ...any) error {
	c := fmt.Sprintf(format, args...)
	d.calls = append(d.calls, c)
	verb, _, _ := strings.Cut(c, " ")
	if d.refuse[verb] > 0 {
		d.refuse[verb]--
		return fmt.Errorf("%s refused", verb)
	}
	return nil
}

func (d *memberDB) lock() func() { d.mu.Lock(); return d.mu.Unlock }

func (d *memberDB) Up(_ context.Context, n db.Node) error {
	defer d.lock()()
	if d.down[n.Name] {
		return errors.New("down")
	}
	return nil
}

func (d *memberDB) Kill(_ context.Context, _ control.Remote, n db.Node) error {
	defer d.lock()()
	d.down[n.Name] = true
	return d.call("kill %s", n.Name)
}

func (d *memberDB) Members(_ context.Context, via db.Node) ([]string, []string, error) {
	defer d.lock()()
	if d.down[via.Name] {
		return nil, nil, errors.New(via.Name + " down")
	}
	if d.noQuorum {
		return nil, nil, fmt.Errorf("%s knows no leader: %w", via.Name, db.ErrNoQuorum)
	}
	if d.stale > 0 {
		d.stale--
		return slices.DeleteFunc(slices.Clone(d.voters), func(s string) bool { return s == "n3" }), slices.Clone(d.learners), nil
	}
	return slices.Clone(d.voters), slices.Clone(d.learners), nil
}

func (d *memberDB) RemoveMember(_ context.Context, via, n db.Node) error {
	defer d.lock()()
	if err := d.call("remove %s via %s", n.Name, via.Name); err != nil {
		return err
	}
	drop := func(s string) bool { return s == n.Name }
	d.voters, d.learners = slices.DeleteFunc(d.voters, drop), slices.DeleteFunc(d.learners, drop)
	return nil
}

func (d *memberDB) AddMember(_ context.Context, via, n db.Node) error {
	defer d.lock()()
	if err := d.call("add %s via %s", n.Name, via.Name); err != nil {
		return err
	}
	if !slices.Contains(d.voters, n.Name) && !slices.Contains(d.learners, n.Name) {
		d.learners = append(d.learners, n.Name) // a member already is no error
	}
	return nil
}

func (d *memberDB) Rejoin(_ context.Context, _ control.Remote, n db.Node) error {
	defer d.lock()()
	if err := d.call("rejoin %s", n.Name); err != nil {
		return err
	}
	d.down[n.Name] = false
	return nil
}

func (d *memberDB) Promote(_ context.Context, via, n db.Node) error {
	defer d.lock()()
	if err := d.call("promote %s via %s", n.Name, via.Name); err != nil {
		return err
	}
	d.learners = slices.DeleteFunc(d.learners, func(s string) bool { return s == n.Name })
	d.voters = append(d.voters, n.Name)
	return nil
}

// memberFixture is a three-node cluster of d led by leader, with a fake
// clock that advances only when the cycle waits.
func memberFixture(d *memberDB, leader string) (*Cluster, *Member, *time.Duration) {
	c := &Cluster{Nodes: threeNodes, DB: d, Membership: d, Remotes: map[string]control.Remote{},
		Leader: func(context.Context) (string, error) { return leader, nil }}
	for _, n := range threeNodes {
		c.Remotes[n.Name] = new(remotetest.Recorder).Remote(n.Name, seqAnswer(""))
	}
	elapsed := new(time.Duration)
	m := &Member{Election: 100 * time.Millisecond, UpTimeout: time.Second, Pace: Pace{
		Now:  func() time.Time { return time.Unix(0, 0).Add(*elapsed) },
		Wait: func(ctx context.Context, w time.Duration) error { *elapsed += w; return ctx.Err() }}}
	return c, m, elapsed
}

// A cycle removes its member through another one (retrying a refusal, as
// etcd refuses removals while its members reconnect), kills it, adds it
// back, rejoins it wiped and promotes it once it has caught up; the
// cluster ends with its original voters.
func TestMemberCycle(t *testing.T) {
	d := newMemberDB()
	d.refuse["remove"], d.refuse["promote"] = 1, 2
	c, m, elapsed := memberFixture(d, "n1")
	require.NoError(t, m.Available(context.Background(), c))
	op, err := m.Start(context.Background(), c, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	require.Equal(t, "start-member", op.F)
	v := op.Value.(faultrec.Member)
	victim := v.Node
	via := "n1"
	if victim == "n1" {
		via = "n2"
	}
	require.Equal(t, []string{
		"remove " + victim + " via " + via, // refused
		"remove " + victim + " via " + otherThan(victim, via),
		"kill " + victim,
		"add " + victim + " via " + via,
		"rejoin " + victim,
		"promote " + victim + " via " + via, "promote " + victim + " via " + otherThan(victim, via), // not caught up
		"promote " + victim + " via " + via,
	}, d.calls)
	require.ElementsMatch(t, []string{"n1", "n2", "n3"}, d.voters)
	require.Empty(t, d.learners)
	require.Equal(t, otherThan(victim, via), v.RemovedVia)
	require.Equal(t, 100*time.Millisecond, *elapsed,
		"an attempt asks every other member: the refused removal is retried at once through the next, the promotion refused by both waits an election timeout")
	require.NotNil(t, v.PromotedMS)

	stop, err := m.Stop(context.Background(), c)
	require.NoError(t, err)
	require.Equal(t, "stop-member", stop.F)
	require.Len(t, d.calls, 8, "a finished cycle leaves nothing for Stop")
}

// otherThan is the node of threeNodes that is neither a nor b.
func otherThan(a, b string) string {
	for _, n := range threeNodes {
		if n.Name != a && n.Name != b {
			return n.Name
		}
	}
	return ""
}

// The leader is the victim when the draw says so, and was_leader says it.
func TestMemberCycleOnTheLeader(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		d := newMemberDB()
		c, m, _ := memberFixture(d, "n2")
		rng := rand.New(rand.NewPCG(seed, 0))
		probe := rand.New(rand.NewPCG(seed, 0))
		pick := threeNodes[probe.IntN(3)].Name
		leaderDraw := probe.IntN(2) == 0
		op, err := m.Start(context.Background(), c, rng)
		require.NoError(t, err)
		v := op.Value.(faultrec.Member)
		want := pick
		if leaderDraw {
			want = "n2"
		}
		require.Equal(t, want, v.Node, "seed %d", seed)
		require.Equal(t, want == "n2", v.WasLeader, "seed %d", seed)
		_, _ = m.Stop(context.Background(), c)
	}
}

// A cycle cut short (the rejoin fails for good) leaves its node out of
// the voters; Stop brings it back, and a later Heal finds nothing to do.
func TestMemberStopFinishesACycleCutShort(t *testing.T) {
	d := newMemberDB()
	d.refuse["rejoin"] = 1
	c, m, _ := memberFixture(d, "n1")
	op, err := m.Start(context.Background(), c, rand.New(rand.NewPCG(1, 2)))
	require.ErrorContains(t, err, "member: ")
	require.ErrorContains(t, err, "rejoin refused")
	victim := op.Value.(faultrec.Member).Node
	require.Equal(t, []string{victim}, d.learners, "added back, never started")

	stop, err := m.Stop(context.Background(), c)
	require.NoError(t, err)
	require.Equal(t, "stop-member", stop.F)
	require.ElementsMatch(t, []string{"n1", "n2", "n3"}, d.voters)
	require.False(t, d.down[victim])
	n := len(d.calls)
	require.NoError(t, m.Heal(context.Background(), c))
	require.Len(t, d.calls, n, "a healed cluster needs nothing")
}

// Heal restores the original membership whoever changed it: a removed
// node is added back and rejoined, a learner that does not run is
// rejoined and promoted. A cluster where no node answers, or a system
// without a membership, is left alone.
func TestMemberHeal(t *testing.T) {
	d := newMemberDB()
	d.voters, d.learners, d.down["n3"] = []string{"n1"}, []string{"n3"}, true
	c, m, _ := memberFixture(d, "n1")
	require.NoError(t, m.Heal(context.Background(), c))
	require.Equal(t, []string{"kill n2", "add n2 via n1", "rejoin n2", "promote n2 via n1",
		"rejoin n3", "promote n3 via n1"}, d.calls)
	require.ElementsMatch(t, []string{"n1", "n2", "n3"}, d.voters)

	dead := newMemberDB()
	for _, n := range threeNodes {
		dead.down[n.Name] = true
	}
	dead.voters = nil
	c, m, _ = memberFixture(dead, "")
	require.NoError(t, m.Heal(context.Background(), c))
	require.Empty(t, dead.calls)

	c.DB, c.Membership = &liveDB{DB: &db.ChaosNode{}}, nil
	require.NoError(t, m.Heal(context.Background(), c))
}

// A controller killed while a majority was down leaves a cluster with no
// leader to ask: Heal (chaos heal, which starts no node) finds nothing it
// can restore and says so at once, without waiting 40 election timeouts
// for a leader that cannot come; Stop fails at once, naming why.
func TestMemberHealWithoutAQuorum(t *testing.T) {
	d := newMemberDB()
	d.noQuorum, d.voters, d.learners = true, []string{"n1", "n2"}, []string{"n3"}
	d.down["n1"], d.down["n2"] = true, true
	c, m, elapsed := memberFixture(d, "")
	require.NoError(t, m.Heal(context.Background(), c))
	require.Empty(t, d.calls)
	require.Zero(t, *elapsed, "no wait for a leader")

	m.value, m.out = &faultrec.Member{Node: "n3"}, []db.Node{threeNodes[2]}
	_, err := m.Stop(context.Background(), c)
	require.ErrorIs(t, err, db.ErrNoQuorum)
	require.ErrorContains(t, err, "member: the membership: ")
	require.Zero(t, *elapsed)
}

// A node is wiped only once the leader lists it as a learner: an answer
// that missed a voter (a lagging node's) makes Heal try to add it back,
// and the add finding it a voter stops there, before any wipe.
func TestMemberHealNeverWipesAVoter(t *testing.T) {
	d := newMemberDB()
	d.stale = 1
	c, m, _ := memberFixture(d, "n1")
	err := m.Heal(context.Background(), c)
	require.ErrorContains(t, err, `lists n3 as "voter", want "learner"`)
	require.NotContains(t, d.calls, "rejoin n3")
}

// Member needs a system with a membership and a leader, and three nodes.
func TestMemberAvailable(t *testing.T) {
	c, m, _ := memberFixture(newMemberDB(), "n1")
	c.DB, c.Membership = &liveDB{DB: &db.Etcd{}}, nil
	require.ErrorContains(t, m.Available(context.Background(), c),
		"member: etcd cannot change its membership at run time (no Membership capability)")
	c, m, _ = memberFixture(newMemberDB(), "n1")
	c.Leader = nil
	require.ErrorContains(t, m.Available(context.Background(), c), "member: chaos-node cannot tell its leader (no Leader capability")
	c, m, _ = memberFixture(newMemberDB(), "n1")
	c.Nodes = threeNodes[:2]
	require.ErrorContains(t, m.Available(context.Background(), c), "needs 3 nodes or more")
}
