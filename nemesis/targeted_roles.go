package nemesis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"chaos/db"
	"chaos/eventlog"
)

// Roles: what the targeted faults know of the nodes, from the system's
// own reports (Cluster.Leader, Cluster.States, Cluster.Events), and the
// roles they aim at: the leader, the newest leader, a node that just
// voted, a follower that is behind.

// RoleLeader is db.NodeState.Role of a leader.
const RoleLeader = db.RoleLeader

// systemName names c's system in errors.
func systemName(c *Cluster) string {
	if c.DB == nil {
		return "the system"
	}
	return c.DB.Name()
}

// errNoLeader is why a fault that needs the leader cannot run.
func errNoLeader(c *Cluster) error {
	return fmt.Errorf("%s cannot tell its leader (no Leader capability; a described system has it with a leader: probe)", systemName(c))
}

// errNoMembership is why a fault that changes the membership cannot run.
func errNoMembership(c *Cluster) error {
	return fmt.Errorf("%s cannot change its membership at run time (no Membership capability)", systemName(c))
}

// errNoStates is why a fault that needs the nodes' states cannot run.
func errNoStates(c *Cluster) error {
	return fmt.Errorf("%s cannot report its nodes' states (no States capability; a described system has it with a state: probe)", systemName(c))
}

// errNoEvents is why a fault that watches event logs cannot run.
func errNoEvents(c *Cluster) error {
	return fmt.Errorf("%s keeps no protocol event log (no Events capability; a described system has it with events:)", systemName(c))
}

// states asks c for its nodes' states.
func states(ctx context.Context, c *Cluster) (map[string]db.NodeState, error) {
	if c.States == nil {
		return nil, errNoStates(c)
	}
	return c.States(ctx)
}

// leaderName is the leader Cluster.Leader names, checked to be a node of
// c.
func leaderName(ctx context.Context, c *Cluster) (string, error) {
	nodes, err := leaderNode(ctx, c)
	if err != nil {
		return "", err
	}
	return nodes[0].Name, nil
}

// leaderAmong returns the node of among that reports itself leader in a
// term after term, with its term; "" when none does. Among several, the
// highest term wins: the newest leader.
func leaderAmong(st map[string]db.NodeState, among []string, term uint64) (string, uint64) {
	best, bestTerm := "", term
	for _, n := range among {
		s, ok := st[n]
		if ok && s.Role == RoleLeader && s.Term > bestTerm {
			best, bestTerm = n, s.Term
		}
	}
	return best, bestTerm
}

// behind returns the follower of among with the shortest log (ties: the
// first in among), or "" when no node of among answered as a follower.
func behind(st map[string]db.NodeState, among []string) string {
	best := ""
	for _, n := range among {
		s, ok := st[n]
		if !ok || s.Role == RoleLeader {
			continue
		}
		if best == "" || s.LogEnd() < st[best].LogEnd() {
			best = n
		}
	}
	return best
}

// voteSeen is a vote a node's event log shows.
type voteSeen struct {
	Node string `json:"node"`
	For  string `json:"for"`
	Term uint64 `json:"term"`
}

// findVote returns the first vote, in the order of nodes and then of each
// log, that a node of nodes cast for another node in a term after term.
func findVote(ctx context.Context, c *Cluster, nodes []string, term uint64) (voteSeen, bool, error) {
	if c.Events == nil {
		return voteSeen{}, false, errNoEvents(c)
	}
	for _, n := range nodes {
		evs, err := c.Events(ctx, n)
		if err != nil {
			continue // a node down or paused is no voter
		}
		for _, e := range evs {
			if e.Event == eventlog.KindVote && e.Term > term && e.For != "" && e.For != n {
				return voteSeen{Node: n, For: e.For, Term: e.Term}, true, nil
			}
		}
	}
	return voteSeen{}, false, nil
}

// votesOf returns the candidates node voted for in term, in log order, as
// its event log shows them now.
func votesOf(ctx context.Context, c *Cluster, node string, term uint64) ([]string, error) {
	if c.Events == nil {
		return nil, errNoEvents(c)
	}
	evs, err := c.Events(ctx, node)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range evs {
		if e.Event == eventlog.KindVote && e.Term == term && !slices.Contains(out, e.For) {
			out = append(out, e.For)
		}
	}
	return out, nil
}

// others returns the names of c's nodes not in except, in c's order.
func others(c *Cluster, except ...string) []string {
	var out []string
	for _, n := range c.Nodes {
		if !slices.Contains(except, n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// upNodes returns the names of c's nodes that answer now, in c's order:
// those States reports, or, for a system without States, those db.Up
// finds answering. A node killed or paused by another fault is left out.
func upNodes(ctx context.Context, c *Cluster) []string {
	if c.States != nil {
		if st, err := c.States(ctx); err == nil {
			var out []string
			for _, n := range c.Nodes {
				if _, ok := st[n.Name]; ok {
					out = append(out, n.Name)
				}
			}
			return out
		}
	}
	probe := Probe{}.withDefaults()
	return filterNodes(c.Nodes, func(n db.Node) bool { return probe.answers(ctx, c.DB, n) })
}

// among is c restricted to the nodes named, in c's order, sharing all the
// rest (the table of cuts too): a targeted fault acts on the nodes that
// answer, and a node down is neither cut nor slowed.
func (c *Cluster) among(names []string) *Cluster {
	c.cutTable()
	c.ruleTable()
	c.skewTable() // the view shares the tables
	v := *c
	v.Nodes = slices.DeleteFunc(slices.Clone(c.Nodes), func(n db.Node) bool { return !slices.Contains(names, n.Name) })
	return &v
}

// leaderWait is how long a targeted sequence waits, before its first
// step, for a steady leader (see awaitLeader): ten election timeouts. The
// schedule has just stopped the other faults, or another sequence has
// just ended, and the cluster may be electing one.
func leaderWait(c *Cluster, election time.Duration) time.Duration {
	return 10 * electionOf(c, election)
}

// leaderPoll is how often that wait asks: a look costs a status request
// to every node.
const leaderPoll = 50 * time.Millisecond

// awaitLeader waits, within the bound, until Cluster.Leader has named the
// same node of c for an election timeout, and returns it; when none was
// named so long in time, the last reason. A leader of a few milliseconds
// may be one whose followers still time out, or one a heal is about to
// depose: a sequence aimed at it would find the roles changed under it.
func awaitLeader(ctx context.Context, c *Cluster, p Pace, election time.Duration) (string, error) {
	leader, _, err := steadyLeader(ctx, c, p, election, false)
	return leader, err
}

// answeringLeader is awaitLeader for a leader that also answers, with the
// view of c's nodes that answer.
func answeringLeader(ctx context.Context, c *Cluster, p Pace, election time.Duration) (string, *Cluster, error) {
	return steadyLeader(ctx, c, p, election, true)
}

// steadyLeader waits for a leader named for an election timeout (and
// answering, when answering is set), ten election timeouts at most.
func steadyLeader(ctx context.Context, c *Cluster, p Pace, election time.Duration, answering bool) (string, *Cluster, error) {
	election = electionOf(c, election)
	var leader, named string
	var since time.Time
	var up []string
	var last error
	ok, err := p.until(ctx, leaderWait(c, election), leaderPoll, func() (bool, error) {
		if leader, last = leaderName(ctx, c); last != nil {
			named = ""
			return false, nil
		}
		if answering {
			if up = upNodes(ctx, c); !slices.Contains(up, leader) {
				named, last = "", fmt.Errorf("the leader %s does not answer", leader)
				return false, nil
			}
		}
		if leader != named {
			named, since = leader, p.now()
		}
		last = fmt.Errorf("the leader %s has led for less than an election timeout", leader)
		return p.now().Sub(since) >= election, nil
	})
	switch {
	case err != nil:
		return "", nil, err
	case !ok:
		return "", nil, last
	case !answering:
		return leader, nil, nil
	}
	return leader, c.among(up), nil
}

// everyNodeAnswers waits until every node of c answers a probe of the
// nodes' states (upNodes), probing again every probeEvery, up to `within`
// (DefaultUpTimeout when not positive: a node another fault just restarted
// is still coming up; a state request may miss under load): a sequence that moves a majority from one side of
// a cut to the other needs them all. It returns how many probes missed
// some node, and, when the last still did, a *ProbeError naming the nodes.
func everyNodeAnswers(ctx context.Context, c *Cluster, p Pace, within time.Duration) (int, error) {
	if within <= 0 {
		within = DefaultUpTimeout
	}
	misses := 0
	var down []string
	ok, err := p.until(ctx, within, probeEvery, func() (bool, error) {
		if down = missing(c, upNodes(ctx, c)); len(down) > 0 {
			misses++
			return false, nil
		}
		return true, nil
	})
	switch {
	case err != nil:
		return misses, err
	case !ok:
		return misses, &ProbeError{Down: down, Misses: misses, Within: within}
	}
	return misses, nil
}

// probeEvery is how often everyNodeAnswers probes: a probe asks every
// node, and a described system's state command may take a while.
const probeEvery = 250 * time.Millisecond

// ProbeError is why a sequence that needs every node answering was
// refused: some node still did not answer after Misses probes within
// Within. The schedule records Misses as the refusal's probe_misses.
type ProbeError struct {
	Down   []string
	Misses int
	Within time.Duration
}

func (e *ProbeError) Error() string {
	return fmt.Sprintf("needs every node answering; %s do not (killed or paused) after %d probes in %v",
		strings.Join(e.Down, ", "), e.Misses, e.Within)
}

// missing returns the names of c's nodes not in up.
func missing(c *Cluster, up []string) []string {
	var out []string
	for _, n := range c.Nodes {
		if !slices.Contains(up, n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// requireRoles reports why c cannot tell the roles a targeted fault needs:
// a leader always, and states and event logs when asked.
func requireRoles(family string, c *Cluster, needStates, needEvents bool) error {
	switch {
	case len(c.Nodes) < 3:
		return fmt.Errorf("%s: needs at least 3 nodes, the cluster has %d", family, len(c.Nodes))
	case c.Leader == nil:
		return fmt.Errorf("%s: %w", family, errNoLeader(c))
	case needStates && c.States == nil:
		return fmt.Errorf("%s: %w", family, errNoStates(c))
	case needEvents && c.Events == nil:
		return fmt.Errorf("%s: %w", family, errNoEvents(c))
	}
	return nil
}
