package raft

import "testing"

// These scenarios replay the situations of the logs in foreignlog/testdata/seeds, where
// other Raft implementations failed or struggled, against this one.

// Seed 001: five nodes; the leader is disconnected, the others elect a new
// leader and make progress; the old leader comes back and follows, and what
// it accepted while cut off is discarded.
func TestScenarioLeaderDisconnectAndReconnect5Nodes(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		sc := newScenario(t, 5, seed, nil)
		old := sc.waitLeader(200)
		sc.commit(100)
		oldTerm := sc.term(old.id)

		sc.disconnect(old.id)
		_, _ = old.rn.Propose([]byte("lost while cut off"))
		sc.run(1)
		newLeader := sc.waitLeader(300)
		if newLeader.id == old.id {
			sc.fatalf("the disconnected leader n%d is still the only leader", old.id)
		}
		if sc.term(newLeader.id) <= oldTerm {
			sc.fatalf("new leader's term %d is not above the old %d", sc.term(newLeader.id), oldTerm)
		}
		idx := sc.commit(100)

		sc.reconnect(old.id)
		sc.waitLeader(300)
		sc.commit(200)
		if st := old.rn.Status(); st.Role == Leader && st.Term <= oldTerm {
			sc.fatalf("old leader n%d still leads its old term %d", old.id, st.Term)
		}
		if old.smIndex < idx {
			sc.fatalf("reconnected n%d applied up to %d, missing index %d", old.id, old.smIndex, idx)
		}
		if e := sc.entryAt(idx); string(e) == "lost while cut off" {
			sc.fatalf("an entry proposed to the cut-off leader was committed")
		}
	}
}

// Seed 004: all nodes start together with identical timers in the log's
// implementation and never elect a leader. Here every seed elects one within
// a few election timeouts, and a follower coming back after a disconnection
// neither stops the cluster nor (with PreVote) bumps the term.
func TestScenarioFollowerComesBack(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		sc := newScenario(t, 3, seed, nil)
		l := sc.waitLeader(5 * 20)
		sc.commit(100)
		var f uint64 = 1
		if f == l.id {
			f = 2
		}
		term := sc.term(l.id)
		sc.disconnect(f)
		sc.run(200) // many election timeouts
		sc.commit(100)
		sc.reconnect(f)
		sc.run(50)
		l2 := sc.waitLeader(300)
		sc.commit(100)
		if l2.id != l.id || sc.term(l2.id) != term {
			sc.fatalf("returning follower n%d disrupted the leader: n%d term %d -> n%d term %d",
				f, l.id, term, l2.id, sc.term(l2.id))
		}
	}
}

// Seed 004 without PreVote: the returning follower does bump the term, but a
// leader is still elected and the cluster makes progress.
func TestScenarioFollowerComesBackWithoutPreVote(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		sc := newScenario(t, 3, seed, func(c *simConfig) { c.preVote, c.checkQuorum = false, false })
		sc.waitLeader(100)
		sc.commit(100)
		sc.disconnect(1)
		sc.run(200)
		sc.reconnect(1)
		sc.waitLeader(300)
		sc.commit(200)
	}
}

// Seed 003 (Figure 8, unreliable): a lossy network with long delays and
// churning leaders; once it calms down, a new command reaches agreement on
// every node, and the invariants held throughout.
func TestScenarioFigure8Unreliable(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		sc := newScenario(t, 5, seed, func(c *simConfig) {
			c.dropRate, c.maxDelay, c.maxMsgBytes = 0.1, 15, 8
		})
		sc.net.dropRate = 0.1
		for round := range 30 {
			sc.nextCmd++
			if l := sc.leader(); l != nil {
				_, _ = l.rn.Propose([]byte{byte(round), byte(sc.nextCmd)})
			}
			if round%3 == 0 {
				if l := sc.leader(); l != nil {
					sc.crash(l.id)
					sc.run(5)
					sc.restart(l.id)
				}
			}
			sc.run(10 + sc.rng.IntN(40))
		}
		sc.net.dropRate = 0
		sc.net.maxDelay = 1
		sc.waitLeader(500)
		sc.commit(500) // one(9000) reaches agreement
	}
}

// Seed 000: the leader is crashed about every four seconds (here every 40
// ticks) for 17 terms; each time a new leader is elected, committed entries
// survive, and the crashed node rejoins.
func TestScenarioLeaderCrashEveryFewSeconds(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		sc := newScenario(t, 5, seed, func(c *simConfig) { c.maxDelay = 2; c.compactEvery = 10 })
		var committed []uint64
		var lastTerm uint64
		for range 17 {
			l := sc.waitLeader(300)
			if term := sc.term(l.id); term <= lastTerm {
				sc.fatalf("leader n%d has term %d, not above the previous leader's %d", l.id, term, lastTerm)
			} else {
				lastTerm = term
			}
			committed = append(committed, sc.commit(100))
			sc.run(40 - sc.rng.IntN(10))
			sc.crash(l.id)
			sc.run(15)
			sc.restart(l.id)
		}
		sc.waitLeader(300)
		last := sc.commit(200)
		for _, n := range sc.nodes {
			if n.smIndex < last {
				sc.fatalf("n%d applied only up to %d of %d", n.id, n.smIndex, last)
			}
		}
		if len(committed) != 17 {
			sc.fatalf("committed %d commands, want 17", len(committed))
		}
	}
}
