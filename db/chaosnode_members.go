package db

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"chaos/control"
	"chaos/node/nodeapi"
)

// memberTimeout bounds one request of a membership change; a change
// answers once it has committed.
const memberTimeout = 5 * time.Second

func (c *ChaosNode) client(n Node) *nodeapi.Client {
	return nodeapi.NewClient(c.ClientAddr(n), &http.Client{Timeout: memberTimeout})
}

// Members asks for GET /members through via, as the leader sees it.
func (c *ChaosNode) Members(ctx context.Context, via Node) (voters, learners []string, err error) {
	resp, _, err := c.leaderMembers(ctx, via)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range resp.Members {
		if m.Role == nodeapi.RoleVoter {
			voters = append(voters, m.Name)
		} else {
			learners = append(learners, m.Name)
		}
	}
	return voters, learners, nil
}

// leaderMembers is the configuration the leader has in force, asked of
// via and, when via does not lead, of the leader via names: a node answers
// from its own log, and a lagging or removed one (which no longer hears of
// changes) would tell an old story. It returns the leader too.
func (c *ChaosNode) leaderMembers(ctx context.Context, via Node) (nodeapi.MembersResponse, Node, error) {
	resp, err := c.client(via).Members(ctx)
	if err != nil {
		return resp, via, wrap(via, "members", err)
	}
	if resp.Leader == via.Name {
		return resp, via, nil
	}
	i := slices.IndexFunc(c.Nodes, func(n Node) bool { return n.Name == resp.Leader })
	if resp.Leader == "" || i < 0 {
		return resp, via, c.noLeader(ctx, via, resp.Leader)
	}
	leader := c.Nodes[i]
	if resp, err = c.client(leader).Members(ctx); err != nil {
		return resp, leader, wrap(leader, "members", err)
	}
	if resp.Leader != leader.Name {
		return resp, leader, fmt.Errorf("%s: members: no longer leads (%q does)", leader.Name, resp.Leader)
	}
	return resp, leader, nil
}

// noLeader is the error of via knowing no leader (leader is what it
// named): it wraps ErrNoQuorum when fewer than a majority of the nodes
// answer (Up), for then no leader can be elected until they run again.
func (c *ChaosNode) noLeader(ctx context.Context, via Node, leader string) error {
	err := fmt.Errorf("%s: members: it knows no leader (%q); the membership is the leader's to say", via.Name, leader)
	up := 0
	for _, n := range c.Nodes {
		if c.Up(ctx, n) == nil {
			up++
		}
	}
	if up <= len(c.Nodes)/2 {
		return fmt.Errorf("%w: %w: %d of %d nodes run", err, ErrNoQuorum, up, len(c.Nodes))
	}
	return err
}

// member finds n among the leader's members.
func (c *ChaosNode) member(ctx context.Context, via, n Node) (nodeapi.Member, bool, error) {
	resp, _, err := c.leaderMembers(ctx, via)
	if err != nil {
		return nodeapi.Member{}, false, err
	}
	m, ok := resp.Member(n.Name)
	return m, ok, nil
}

// RemoveMember sends DELETE /members/{id} for n's ID.
func (c *ChaosNode) RemoveMember(ctx context.Context, via, n Node) error {
	m, ok, err := c.member(ctx, via, n)
	if err != nil || !ok {
		return err
	}
	_, err = c.client(via).RemoveMember(ctx, m.ID)
	return wrap(n, fmt.Sprintf("remove member %d through %s", m.ID, via.Name), err)
}

// AddMember sends POST /members: n is added as a learner under a new ID.
func (c *ChaosNode) AddMember(ctx context.Context, via, n Node) error {
	if _, ok, err := c.member(ctx, via, n); err != nil || ok {
		return err
	}
	_, err := c.client(via).AddMember(ctx, nodeapi.AddMemberRequest{Name: n.Name, Peer: c.peerAddr(n), Client: c.ClientAddr(n)})
	return wrap(n, "add member through "+via.Name, err)
}

// Rejoin removes n's data directory and starts it with --join.
func (c *ChaosNode) Rejoin(ctx context.Context, r control.Remote, n Node) error {
	dir := c.Layout.NodeDir(chaosNodeName, n)
	if err := Run(ctx, r, "rm -rf "+quotePaths(dir, "data")); err != nil {
		return wrap(n, "wipe data", err)
	}
	argv, err := c.argv(n)
	if err != nil {
		return err
	}
	return wrap(n, "start chaos-node --join", c.daemon(n).Start(ctx, r, append(argv, "--join")))
}

// Promote sends POST /members/{id}/promote once n has applied what the
// leader had committed when asked.
func (c *ChaosNode) Promote(ctx context.Context, via, n Node) error {
	resp, leader, err := c.leaderMembers(ctx, via)
	if err != nil {
		return err
	}
	m, ok := resp.Member(n.Name)
	switch {
	case !ok:
		return fmt.Errorf("%s: promote: not a member", n.Name)
	case m.Role == nodeapi.RoleVoter:
		return nil
	}
	lead, err := c.client(leader).Status(ctx)
	if err != nil {
		return wrap(leader, "status", err)
	}
	st, err := c.client(n).Status(ctx)
	if err != nil {
		return wrap(n, "status", err)
	}
	if st.Applied < lead.Commit {
		return fmt.Errorf("%s: promote: applied %d of leader %s's commit %d; not caught up", n.Name, st.Applied, leader.Name, lead.Commit)
	}
	_, err = c.client(leader).PromoteMember(ctx, m.ID)
	return wrap(n, fmt.Sprintf("promote member %d through %s", m.ID, leader.Name), err)
}

var _ Membership = (*ChaosNode)(nil)
