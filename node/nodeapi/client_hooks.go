package nodeapi

import "context"

// The fault hooks. Each answers the node's Faults after the request; a node
// without --enable-fault-hooks answers 403, a bad request 400 (as *Error).

// Faults returns the node's current faults.
func (c *Client) Faults(ctx context.Context) (Faults, error) {
	return c.hook(ctx, RouteFaults, nil)
}

// ClearFaults removes every fault the hooks can set.
func (c *Client) ClearFaults(ctx context.Context) (Faults, error) {
	return c.hook(ctx, RouteClearFaults, nil)
}

// SetClock jumps the node's clock by f.OffsetMS and, when f.Rate > 0, sets
// its rate.
func (c *Client) SetClock(ctx context.Context, f ClockFault) (Faults, error) {
	return c.hook(ctx, RouteSetClock, &f)
}

// ResetClock puts the node's clock back on true time at rate 1.
func (c *Client) ResetClock(ctx context.Context) (Faults, error) {
	return c.hook(ctx, RouteResetClock, nil)
}

// SetPartition replaces the node's drop list with drop (nil: none).
func (c *Client) SetPartition(ctx context.Context, drop []string) (Faults, error) {
	if drop == nil {
		drop = []string{}
	}
	return c.hook(ctx, RouteSetPartition, &PartitionRequest{Drop: drop})
}

// HealPartition empties the node's drop list.
func (c *Client) HealPartition(ctx context.Context) (Faults, error) {
	return c.hook(ctx, RouteHealPartition, nil)
}

// SetNet sets message faults toward f.Peers (empty: every peer).
func (c *Client) SetNet(ctx context.Context, f NetFaults) (Faults, error) {
	return c.hook(ctx, RouteSetNet, &f)
}

// ClearNet removes every message fault.
func (c *Client) ClearNet(ctx context.Context) (Faults, error) {
	return c.hook(ctx, RouteClearNet, nil)
}

// SetAppend bounds the entry bytes of the node's append messages and the
// messages in flight to a follower (each 0: the node's own limit).
func (c *Client) SetAppend(ctx context.Context, limit AppendLimit) (Faults, error) {
	return c.hook(ctx, RouteSetAppend, &limit)
}

// ResetAppend puts back the append limit the node was started with.
func (c *Client) ResetAppend(ctx context.Context) (Faults, error) {
	return c.hook(ctx, RouteResetAppend, nil)
}

// hook sends one fault hook request with body (none when nil).
func (c *Client) hook(ctx context.Context, route string, body any) (Faults, error) {
	var f Faults
	err := c.decode(ctx, route, body, &f)
	return f, err
}
