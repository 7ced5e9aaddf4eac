package nodeapi

import (
	"context"
	"strconv"
)

// Members asks the node for the configuration it has in force.
func (c *Client) Members(ctx context.Context) (MembersResponse, error) {
	var r MembersResponse
	err := c.decode(ctx, RouteMembers, nil, &r)
	return r, err
}

// AddMember adds a learner, through the leader.
func (c *Client) AddMember(ctx context.Context, req AddMemberRequest) (AddMemberResponse, error) {
	var r AddMemberResponse
	err := c.decode(ctx, RouteAddMember, &req, &r)
	return r, err
}

// PromoteMember makes learner id a voter, through the leader.
func (c *Client) PromoteMember(ctx context.Context, id uint64) (MembersResponse, error) {
	return c.memberChange(ctx, RoutePromoteMember, id)
}

// RemoveMember removes member id (a voter or a learner), through the leader.
func (c *Client) RemoveMember(ctx context.Context, id uint64) (MembersResponse, error) {
	return c.memberChange(ctx, RouteRemoveMember, id)
}

func (c *Client) memberChange(ctx context.Context, route string, id uint64) (MembersResponse, error) {
	var r MembersResponse
	err := c.decodeAt(ctx, route, strconv.FormatUint(id, 10), nil, &r)
	return r, err
}
