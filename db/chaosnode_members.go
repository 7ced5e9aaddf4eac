package db

import (
	"context"
	"fmt"
	"net/http"
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

// Members asks via for GET /members.
func (c *ChaosNode) Members(ctx context.Context, via Node) (voters, learners []string, err error) {
	resp, err := c.client(via).Members(ctx)
	if err != nil {
		return nil, nil, wrap(via, "members", err)
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

// member finds n among via's members.
func (c *ChaosNode) member(ctx context.Context, via, n Node) (nodeapi.Member, bool, error) {
	resp, err := c.client(via).Members(ctx)
	if err != nil {
		return nodeapi.Member{}, false, wrap(via, "members", err)
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
	dir := c.Layout.nodeDir(chaosNodeName, n)
	if err := run(ctx, r, "rm -rf "+quotePaths(dir, "data")); err != nil {
		return wrap(n, "wipe data", err)
	}
	argv, err := c.argv(n)
	if err != nil {
		return err
	}
	return wrap(n, "start chaos-node --join", c.daemon(n).start(ctx, r, append(argv, "--join")))
}

// Promote sends POST /members/{id}/promote once n has applied what the
// leader had committed when asked.
func (c *ChaosNode) Promote(ctx context.Context, via, n Node) error {
	m, ok, err := c.member(ctx, via, n)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%s: promote: not a member", n.Name)
	case m.Role == nodeapi.RoleVoter:
		return nil
	}
	lead, err := c.client(via).Status(ctx)
	if err != nil {
		return wrap(via, "status", err)
	}
	st, err := c.client(n).Status(ctx)
	if err != nil {
		return wrap(n, "status", err)
	}
	if st.Applied < lead.Commit {
		return fmt.Errorf("%s: promote: applied %d of %s's commit %d; not caught up", n.Name, st.Applied, via.Name, lead.Commit)
	}
	_, err = c.client(via).PromoteMember(ctx, m.ID)
	return wrap(n, fmt.Sprintf("promote member %d through %s", m.ID, via.Name), err)
}

var _ Membership = (*ChaosNode)(nil)
