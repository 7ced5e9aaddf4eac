package raft

import "testing"

// failoverTicks crashes the leader of a settled cluster and returns how
// many ticks pass until another node leads and every live node follows it.
func failoverTicks(t *testing.T, nodes int, seed uint64, tweak func(*simConfig)) int {
	t.Helper()
	sc := newScenario(t, nodes, seed, tweak)
	old := sc.waitLeader(200)
	sc.commit(100)
	sc.crash(old.id)
	for ticks := 1; ticks <= 300; ticks++ {
		sc.run(1)
		if l := sc.leader(); l != nil && l.id != old.id && sc.allFollow(l) {
			return ticks
		}
	}
	sc.fatalf("no new leader within 300 ticks of n%d's crash", old.id)
	return 0
}

// With fast failover a dead leader is replaced within 9 ticks, before the
// election timeout (10 ticks) that the slow path waits at least: the notice
// takes up to 2, the first survivor campaigns at the next tick, pre-vote
// and vote take a round trip of 2 ticks each in the simulator (6 or 7 in
// all), and when its pre-vote reached a survivor that had no notice yet,
// the next survivor, 2 ticks later, wins (9).
func TestFastFailoverReplacesADeadLeaderInTicks(t *testing.T) {
	fast := func(c *simConfig) { c.fastFailover = true }
	for _, nodes := range []int{3, 5} {
		for seed := uint64(1); seed <= 30; seed++ {
			if got := failoverTicks(t, nodes, seed, fast); got > 9 {
				t.Errorf("%d nodes, seed %d: fast failover took %d ticks", nodes, seed, got)
			}
			if got := failoverTicks(t, nodes, seed, nil); got < 10 {
				t.Errorf("%d nodes, seed %d: without fast failover a leader came after %d ticks, before an election timeout", nodes, seed, got)
			}
		}
	}
}

// Lease-based reads rest on followers ignoring campaigns for an election
// timeout after they last heard the leader: under them the notice is
// ignored and failover takes the timeout.
func TestFastFailoverKeepsLeasePromises(t *testing.T) {
	lease := func(c *simConfig) { c.fastFailover, c.readMode = true, ReadLeaseBased }
	for seed := uint64(1); seed <= 20; seed++ {
		if got := failoverTicks(t, 3, seed, lease); got < 10 {
			t.Errorf("seed %d: under leases a leader came %d ticks after the crash, before an election timeout", seed, got)
		}
	}
}

// A follower told that its live leader's connection ended campaigns, but
// PreVote and the other followers' leases keep the leader in place: no
// term changes, and the follower follows again.
func TestSpuriousPeerLostLeavesALiveLeader(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		sc := newScenario(t, 3, seed, func(c *simConfig) { c.fastFailover = true })
		l := sc.waitLeader(200)
		sc.commit(100)
		term := sc.term(l.id)
		f := sc.nodes[0]
		if f == l {
			f = sc.nodes[1]
		}
		f.rn.PeerLost(l.id)
		f.rn.PeerLost(99) // not a member: ignored
		sc.run(30)
		if st := l.rn.Status(); st.Role != Leader || st.Term != term {
			sc.fatalf("n%d lost its leadership of term %d to a spurious notice: now %v in term %d", l.id, term, st.Role, st.Term)
		}
		if st := f.rn.Status(); st.Role != Follower || st.Lead != l.id {
			sc.fatalf("n%d does not follow n%d again: %v, leader %d", f.id, l.id, st.Role, st.Lead)
		}
		sc.commit(100)
	}
}
