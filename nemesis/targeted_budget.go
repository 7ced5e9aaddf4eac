package nemesis

import "time"

// How long each targeted sequence may take, for the schedule's Budget (see
// OneShot): room for a steady leader, for each election the sequence
// provokes under slowed links and clocks, and for a restarted node to
// answer (restartBudget), on a cluster that behaves. Measured on chaos-node
// (500 ms election timeout), figure8 needed more than 9 s of waits (24
// election timeouts less the undo's 3 s cut it short every time), vote-restart
// 8 s, lease 5 s, election-delay 4 s, leader-cycle 2 s; on etcd (1 s),
// vote-restart and figure8 20 s or more. A sequence's own waits are bounded
// far higher (ten election timeouts each) and end early at its budget
// instead (see withSequenceEnd), so that it is undone before the fault
// window closes; the schedule's step timeout (30 s) bounds every budget,
// and the schedule keeps the longest a sequence took in the run, when that
// was longer.

// restartBudget is the time a budget gives a node to restart and answer.
const restartBudget = 3 * time.Second

// sequenceBudget is elections election timeouts of c (or the family's
// own, when it was given one) and restarts restarts.
func sequenceBudget(c *Cluster, election time.Duration, elections float64, restarts int) time.Duration {
	return time.Duration(elections*float64(electionOf(c, election))) + time.Duration(restarts)*restartBudget
}

// Budget: a steady leader, its clock slowed until it notices, then cut off
// until another leads (about three elections).
func (l *Lease) Budget(c *Cluster) time.Duration { return sequenceBudget(c, l.Election, 16, 0) }

// Budget: up to three provoked elections under slowed links, a crashed
// voter restarted, and the old leader asking again.
func (f *VoteRestart) Budget(c *Cluster) time.Duration {
	return sequenceBudget(c, f.Election, 30, 1)
}

// Budget: three leaders in turn, each elected under slowed links.
func (f *Figure8) Budget(c *Cluster) time.Duration { return sequenceBudget(c, f.Election, 40, 0) }

// Budget: up to three rounds of delayed links and a cut leader.
func (e *ElectionDelay) Budget(c *Cluster) time.Duration {
	return sequenceBudget(c, e.Election, 20, 0)
}

// Budget: a leader cut off, the next elected, killed and restarted after
// the one after.
func (l *LeaderCycle) Budget(c *Cluster) time.Duration {
	return sequenceBudget(c, l.Election, 20, 1)
}

// Budget: a member removed, added back wiped, caught up and promoted (on
// etcd, which refuses a removal until its members have been connected for
// a while, 6 to 11 s).
func (m *Member) Budget(c *Cluster) time.Duration { return sequenceBudget(c, m.Election, 12, 1) }
