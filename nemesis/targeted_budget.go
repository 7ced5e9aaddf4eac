package nemesis

import "time"

// How long each targeted sequence may take, for the schedule's Budget (see
// OneShot): a steady leader is found within a few election timeouts, each
// election the sequence provokes ends within a few more, and a restarted
// node answers within restartBudget. A sequence on a cluster that behaves
// ends well within it (etcd's vote-restart took 14 s of its 23); its own
// waits are bounded far higher (ten election timeouts each), and end early
// at its budget instead (see withSequenceEnd), so that it is undone before
// the fault window closes. The schedule also keeps the longest a sequence
// took in the run, when that was longer.

// restartBudget is the time a budget gives a node to restart and answer.
const restartBudget = 3 * time.Second

// sequenceBudget is elections election timeouts of c (or the family's
// own, when it was given one) and restarts restarts.
func sequenceBudget(c *Cluster, election time.Duration, elections float64, restarts int) time.Duration {
	return time.Duration(elections*float64(electionOf(c, election))) + time.Duration(restarts)*restartBudget
}

// Budget: a steady leader, its clock slowed until it notices, then cut off
// until another leads (about three elections).
func (l *Lease) Budget(c *Cluster) time.Duration { return sequenceBudget(c, l.Election, 12, 0) }

// Budget: up to three provoked elections under slowed links, a crashed
// voter restarted, and the old leader asking again.
func (f *VoteRestart) Budget(c *Cluster) time.Duration {
	return sequenceBudget(c, f.Election, 20, 1)
}

// Budget: three leaders in turn, each elected under slowed links.
func (f *Figure8) Budget(c *Cluster) time.Duration { return sequenceBudget(c, f.Election, 24, 0) }

// Budget: up to three rounds of delayed links and a cut leader.
func (e *ElectionDelay) Budget(c *Cluster) time.Duration {
	return sequenceBudget(c, e.Election, 14, 0)
}

// Budget: a leader cut off, the next elected, killed and restarted after
// the one after.
func (l *LeaderCycle) Budget(c *Cluster) time.Duration {
	return sequenceBudget(c, l.Election, 14, 1)
}

// Budget: a member removed, added back wiped, caught up and promoted.
func (m *Member) Budget(c *Cluster) time.Duration { return sequenceBudget(c, m.Election, 20, 1) }
