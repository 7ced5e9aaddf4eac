package db

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"chaos/node/nodeapi"
)

// ChaosNodeHooks are chaos-node's fault hooks (Hooks): HTTP requests of
// node/nodeapi to each hooked node's client address.
type ChaosNodeHooks struct {
	// Addrs are the client addresses (host:port) of the nodes that answer
	// the hooks, by node name.
	Addrs map[string]string
	// HTTP sends the requests; nil means a client with a 5 s timeout
	// (HookTimeout).
	HTTP *http.Client
}

// HookTimeout bounds one hook request when ChaosNodeHooks.HTTP is nil.
const HookTimeout = 5 * time.Second

var _ Hooks = (*ChaosNodeHooks)(nil)

// Hooked reports whether node has a hook address.
func (h *ChaosNodeHooks) Hooked(node string) bool { return h.Addrs[node] != "" }

func (h *ChaosNodeHooks) SetDropList(ctx context.Context, node string, peers []string) error {
	drop := append([]string{}, peers...)
	_, err := h.send(node, nodeapi.RouteSetPartition, func(c *nodeapi.Client) (nodeapi.Faults, error) {
		return c.SetPartition(ctx, drop)
	})
	return err
}

func (h *ChaosNodeHooks) ClearDropList(ctx context.Context, node string) error {
	return h.heal(node, nodeapi.RouteHealPartition, func(c *nodeapi.Client) (nodeapi.Faults, error) { return c.HealPartition(ctx) })
}

func (h *ChaosNodeHooks) SetNetFaults(ctx context.Context, node string, f NetFaults) error {
	body := nodeapi.NetFaults{Peers: f.Peers, Loss: f.Loss, Duplicate: f.Duplicate, Reorder: f.Reorder,
		DelayMS: f.DelayMS, JitterMS: f.JitterMS}
	_, err := h.send(node, nodeapi.RouteSetNet, func(c *nodeapi.Client) (nodeapi.Faults, error) { return c.SetNet(ctx, body) })
	return err
}

func (h *ChaosNodeHooks) ClearNetFaults(ctx context.Context, node string) error {
	return h.heal(node, nodeapi.RouteClearNet, func(c *nodeapi.Client) (nodeapi.Faults, error) { return c.ClearNet(ctx) })
}

func (h *ChaosNodeHooks) SetClock(ctx context.Context, node string, s ClockSkew) (ClockSkew, error) {
	f, err := h.send(node, nodeapi.RouteSetClock, func(c *nodeapi.Client) (nodeapi.Faults, error) {
		return c.SetClock(ctx, nodeapi.ClockFault{OffsetMS: s.OffsetMS, Rate: s.Rate})
	})
	return ClockSkew{OffsetMS: f.Clock.OffsetMS, Rate: f.Clock.Rate}, err
}

func (h *ChaosNodeHooks) ResetClock(ctx context.Context, node string) error {
	return h.heal(node, nodeapi.RouteResetClock, func(c *nodeapi.Client) (nodeapi.Faults, error) { return c.ResetClock(ctx) })
}

func (h *ChaosNodeHooks) SetAppendLimit(ctx context.Context, node string, l AppendLimit) error {
	_, err := h.send(node, nodeapi.RouteSetAppend, func(c *nodeapi.Client) (nodeapi.Faults, error) {
		return c.SetAppend(ctx, nodeapi.AppendLimit{MaxBytes: l.MaxBytes, MaxInflight: l.MaxInflight})
	})
	return err
}

func (h *ChaosNodeHooks) ResetAppendLimit(ctx context.Context, node string) error {
	return h.heal(node, nodeapi.RouteResetAppend, func(c *nodeapi.Client) (nodeapi.Faults, error) { return c.ResetAppend(ctx) })
}

// send sends one request to node's hooks: call, on a client of them.
// route (a nodeapi.Route*) names the request in the error, after the
// node.
func (h *ChaosNodeHooks) send(node, route string, call func(*nodeapi.Client) (nodeapi.Faults, error)) (nodeapi.Faults, error) {
	addr := h.Addrs[node]
	if addr == "" {
		return nodeapi.Faults{}, fmt.Errorf("%s: %s: the node has no fault hooks", node, route)
	}
	hc := h.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: HookTimeout}
	}
	f, err := call(nodeapi.NewClient(addr, hc))
	if err != nil {
		if noHookState(err) {
			err = noHookStateError{err}
		}
		return nodeapi.Faults{}, fmt.Errorf("%s: %s: %w", node, route, err)
	}
	return f, nil
}

// heal sends a request that removes a fault: a node without hooks, or
// holding none (see ErrNoHookState), has nothing to remove.
func (h *ChaosNodeHooks) heal(node, route string, call func(*nodeapi.Client) (nodeapi.Faults, error)) error {
	if h.Addrs[node] == "" {
		return nil
	}
	_, err := h.send(node, route, call)
	if errors.Is(err, ErrNoHookState) {
		return nil
	}
	return err
}

// noHookState reports whether a failed hook request shows that the node
// holds no hook faults: it does not run (connection refused) or runs
// without hooks (403).
func noHookState(err error) bool {
	var ae *nodeapi.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &ae) && ae.Status == http.StatusForbidden
}

// noHookStateError is a hook request's error that shows the node holds
// no hook faults: its text is the request's, and it is ErrNoHookState.
type noHookStateError struct{ error }

func (e noHookStateError) Unwrap() []error { return []error{e.error, ErrNoHookState} }
