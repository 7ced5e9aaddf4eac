package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"chaos/db"
	"chaos/history/faultrec"
)

// Member is the member family: a membership change cycle, as Jepsen's etcd
// tests grow and shrink the cluster. One member (the leader half of the
// time) is removed through another member, killed, added back as a new
// member under its old name (a learner where the system has them), started
// with its data wiped to join the running cluster, and promoted to voter
// once it has caught up. The whole cycle runs inside Start, so the cluster
// is back to its original membership when the schedule moves on; clients
// meet the removed member only as a node that does not answer. Stop and
// Heal finish a cycle cut short: every node that is not a voter is added
// back (or promoted) the same way.
//
// Op "start-member": {"node", "was_leader", "removed_via", "removed_ms",
// "rejoined_ms", "promoted_ms"} (milliseconds from the start of the
// cycle); "error" when a step failed.
type Member struct {
	// Election is the election timeout (default: the system's,
	// Cluster.Timing): each step (remove, add, promote) is retried for 40
	// of them at most.
	Election time.Duration
	// UpTimeout bounds the wait for the rejoined node's process to answer
	// (default DefaultUpTimeout).
	UpTimeout time.Duration
	// Pace is the cycle's clock (default: real time).
	Pace Pace

	mu    sync.Mutex
	value *faultrec.Member // the active fault's op value; nil when none
	out   []db.Node        // nodes a cut-short cycle left outside the voters
}

// MemberFamily is the member family's name.
const MemberFamily = faultrec.NameMember

func (m *Member) Name() string { return MemberFamily }

// Available needs a system whose membership changes (the Membership
// capability) and that says who leads (the Leader capability: Start picks
// the leader half of the time), and Remotes to kill and start with.
func (m *Member) Available(_ context.Context, c *Cluster) error {
	if c.Membership == nil {
		return fmt.Errorf("%s: %w", MemberFamily, errNoMembership(c))
	}
	if c.Leader == nil {
		return fmt.Errorf("%s: %w", MemberFamily, errNoLeader(c))
	}
	if len(c.Nodes) < 3 {
		return fmt.Errorf("%s: needs 3 nodes or more (a member is out during the cycle), have %d", MemberFamily, len(c.Nodes))
	}
	return requireRemotes(MemberFamily, c)
}

// Start runs one cycle on the leader or a random member (rng decides).
func (m *Member) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.value != nil {
		return Op{}, fmt.Errorf("%s: a fault is active already; stop it first", MemberFamily)
	}
	victim := c.Nodes[rng.IntN(len(c.Nodes))]
	leader, err := c.Leader(ctx)
	if rng.IntN(2) == 0 && err == nil {
		if n, err := nodeByName(c, leader); err == nil {
			victim = n
		}
	}
	v := &faultrec.Member{Node: victim.Name, WasLeader: err == nil && victim.Name == leader}
	m.value = v
	m.out = append(m.out, victim)
	err = m.cycle(ctx, c, victim, v)
	if err == nil {
		m.out = slices.DeleteFunc(m.out, func(n db.Node) bool { return n == victim })
	}
	return Op{F: "start-member", Value: *v}, wrapFamily(MemberFamily, err)
}

// cycle removes victim, kills it and brings it back as a new voter,
// recording each step's time in v.
func (m *Member) cycle(ctx context.Context, c *Cluster, victim db.Node, v *faultrec.Member) error {
	ms := c.Membership
	began := m.Pace.now()
	since := func() int64 { return m.Pace.now().Sub(began).Milliseconds() }
	var via string
	err := m.retry(ctx, c, "remove "+victim.Name, func() error {
		return m.ask(ctx, c, victim, func(n db.Node) error {
			if err := ms.RemoveMember(ctx, n, victim); err != nil {
				return err
			}
			via = n.Name
			return m.expect(ctx, ms, n, victim, "")
		})
	})
	if err != nil {
		return err
	}
	v.RemovedVia, v.RemovedMS = via, new(since())
	if err := m.rejoin(ctx, c, victim, true); err != nil {
		return err
	}
	v.RejoinedMS = new(since())
	if err := m.promote(ctx, c, victim); err != nil {
		return err
	}
	v.PromotedMS = new(since())
	return nil
}

// rejoin adds n back as a new member and starts it, wiped, to join; kill
// first says n may run (as a removed member) and must be stopped. n's data
// is wiped only once the leader lists it as a learner: never a voter's.
func (m *Member) rejoin(ctx context.Context, c *Cluster, n db.Node, kill bool) error {
	ms := c.Membership
	if kill {
		r, err := nodeRemote(c, n)
		if err != nil {
			return err
		}
		if err := c.DB.Kill(ctx, r, n); err != nil {
			return err
		}
	}
	err := m.retry(ctx, c, "add "+n.Name, func() error {
		return m.ask(ctx, c, n, func(via db.Node) error {
			if err := ms.AddMember(ctx, via, n); err != nil {
				return err
			}
			return m.expect(ctx, ms, via, n, "learner")
		})
	})
	if err != nil {
		return err
	}
	return m.rejoinLearner(ctx, c, n)
}

// promote makes n a voter once it has caught up.
func (m *Member) promote(ctx context.Context, c *Cluster, n db.Node) error {
	ms := c.Membership
	return m.retry(ctx, c, "promote "+n.Name, func() error {
		return m.ask(ctx, c, n, func(via db.Node) error {
			if err := ms.Promote(ctx, via, n); err != nil {
				return err
			}
			return m.expect(ctx, ms, via, n, "voter")
		})
	})
}

// expect checks that via lists n in role ("voter", "learner", or "" for
// not a member).
func (m *Member) expect(ctx context.Context, ms db.Membership, via, n db.Node, role string) error {
	voters, learners, err := ms.Members(ctx, via)
	if err != nil {
		return err
	}
	got := ""
	switch {
	case slices.Contains(voters, n.Name):
		got = "voter"
	case slices.Contains(learners, n.Name):
		got = "learner"
	}
	if got != role {
		return fmt.Errorf("%s lists %s as %q, want %q", via.Name, n.Name, got, role)
	}
	return nil
}

// ask runs f through each node but not, in turn, until one succeeds.
func (m *Member) ask(ctx context.Context, c *Cluster, not db.Node, f func(via db.Node) error) error {
	var errs []error
	for _, n := range c.Nodes {
		if n == not {
			continue
		}
		err := f(n)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// retry repeats step every election timeout until it succeeds, for 40
// election timeouts at most; the error is the last attempt's. A step that
// fails for want of a quorum (db.ErrNoQuorum) is not retried: no leader
// comes until stopped nodes run again.
func (m *Member) retry(ctx context.Context, c *Cluster, what string, step func() error) error {
	election := electionOf(c, m.Election)
	var last error
	ok, err := m.Pace.until(ctx, 40*election, election, func() (bool, error) {
		last = step()
		if errors.Is(last, db.ErrNoQuorum) {
			return false, last
		}
		return last == nil, nil
	})
	switch {
	case errors.Is(last, db.ErrNoQuorum):
		return fmt.Errorf("%s: %w", what, last)
	case err != nil:
		return fmt.Errorf("%s: %w (last attempt: %v)", what, err, last)
	case !ok:
		return fmt.Errorf("%s: gave up after %v: %w", what, 40*election, last)
	}
	return nil
}

// Stop ends the active fault: a cycle cut short is finished (see Heal's
// restore). With no fault active it does nothing and returns the zero Op.
func (m *Member) Stop(ctx context.Context, c *Cluster) (Op, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.value == nil {
		return Op{}, nil
	}
	op := Op{F: "stop-member", Value: *m.value}
	m.value = nil
	return op, wrapFamily(MemberFamily, m.restore(ctx, c, m.out))
}

// Heal returns the cluster to its original membership, whether or not
// this process changed it: every node that is not a voter is added back
// (killed, re-added, rejoined wiped) or, a learner, promoted. Idempotent.
// A cluster with fewer than a majority of its nodes running (db.ErrNoQuorum)
// has nothing to restore until they run again, and Heal starts none: in a
// run, the stops of kill and power-loss have restarted them before it
// comes; after `chaos heal` (a controller killed while a majority was
// down) the next run deploys afresh.
func (m *Member) Heal(ctx context.Context, c *Cluster) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.value = nil
	if c.Membership == nil {
		return nil
	}
	err := m.restore(ctx, c, c.Nodes)
	if errors.Is(err, db.ErrNoQuorum) {
		return nil
	}
	return wrapFamily(MemberFamily, err)
}

// restore brings each of nodes that is not a voter back as one; m.out
// keeps those it fails on. A cluster none of whose nodes answers has no
// membership to restore (it does not run: the next run deploys afresh);
// one where fewer than a majority answer fails at once, with
// db.ErrNoQuorum, instead of waiting for a leader.
func (m *Member) restore(ctx context.Context, c *Cluster, nodes []db.Node) error {
	ms := c.Membership
	if !slices.ContainsFunc(c.Nodes, func(n db.Node) bool { return c.DB.Up(ctx, n) == nil }) {
		return nil
	}
	var voters, learners []string
	err := m.retry(ctx, c, "the membership", func() error {
		return m.ask(ctx, c, db.Node{}, func(via db.Node) error {
			var err error
			voters, learners, err = ms.Members(ctx, via)
			return err
		})
	})
	if err != nil {
		return err
	}
	var errs []error
	var failed []db.Node
	for _, n := range slices.Clone(nodes) {
		var err error
		switch {
		case slices.Contains(voters, n.Name):
			continue
		case !slices.Contains(learners, n.Name):
			err = m.rejoin(ctx, c, n, true)
		case c.DB.Up(ctx, n) != nil:
			err = m.rejoinLearner(ctx, c, n)
		}
		if err == nil {
			err = m.promote(ctx, c, n)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			failed = append(failed, n)
		}
	}
	m.out = failed
	return errors.Join(errs...)
}

// rejoinLearner starts a learner that does not run, wiped, to join.
func (m *Member) rejoinLearner(ctx context.Context, c *Cluster, n db.Node) error {
	r, err := nodeRemote(c, n)
	if err != nil {
		return err
	}
	if err := c.Membership.Rejoin(ctx, r, n); err != nil {
		return err
	}
	return waitUp(ctx, c.DB, n, m.UpTimeout)
}

// OneShot: a cycle that succeeded leaves nothing for Stop.
func (m *Member) OneShot() {}
