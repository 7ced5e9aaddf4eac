package db

import "context"

// The optional capabilities of a system under test. A DB implements those
// it has; callers discover them with a type assertion, never by name.

// LeaderFinder is a system that can say which node leads.
type LeaderFinder interface {
	// Leader returns the name of the node the cluster reports as leader,
	// asking the nodes of nodes; an error when none reports one.
	Leader(ctx context.Context, nodes []Node) (string, error)
}

// FaultHooker is a system whose nodes answer chaos-node's fault hooks
// (clock, drop list, packet faults) at an HTTP address.
type FaultHooker interface {
	// HookAddr is where n answers the hooks (host:port), and false when n
	// runs without them.
	HookAddr(n Node) (string, bool)
}
