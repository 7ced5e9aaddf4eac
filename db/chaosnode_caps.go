package db

import (
	"context"
	"net/http"
	"path"
	"sync"
	"time"

	"chaos/eventlog"
	"chaos/node/nodeapi"
)

// chaosNodeRecovery is the recovery bound chaos-node is held to: it
// elects within a few election timeouts of the final heal.
const chaosNodeRecovery = 5 * time.Second

// Capabilities are chaos-node's: its leader and states from GET /status,
// its events.jsonl, the fault hooks when started with them, its timing,
// its data directory, its membership, its fake clocks, its process and
// its peer address.
func (c *ChaosNode) Capabilities() Capabilities {
	caps := Capabilities{Leader: c, States: c, Events: c, Timing: c.timing(), Storage: c,
		Membership: c, FakeClocks: c, Processes: c, Peers: c}
	if c.FaultHooks {
		addrs := map[string]string{}
		for _, n := range c.Nodes {
			addrs[n.Name] = c.ClientAddr(n)
		}
		caps.Hooks = &ChaosNodeHooks{Addrs: addrs}
	}
	return caps
}

// StorageMount is n's data directory (--data-dir), served through the
// fault file system when Storage is set.
func (c *ChaosNode) StorageMount(n Node) StorageMount {
	dir := c.Layout.NodeDir(chaosNodeName, n)
	return NewStorageMount(n, dir, path.Join(dir, "data"), c.Storage)
}

// timing is the heartbeat and election timeout the nodes start with.
func (c *ChaosNode) timing() Timing {
	t := Timing{Heartbeat: c.Heartbeat, ElectionTimeout: c.Election, Recovery: chaosNodeRecovery}
	if t.Heartbeat <= 0 {
		t.Heartbeat = 50 * time.Millisecond
	}
	if t.ElectionTimeout <= 0 {
		t.ElectionTimeout = 500 * time.Millisecond
	}
	return t
}

// EventLog is n's events.jsonl, in its log directory.
func (c *ChaosNode) EventLog(n Node) string {
	return path.Join(c.Layout.NodeDir(chaosNodeName, n), eventlog.FileName)
}

// chaosNodeStatusTimeout bounds one node's answer to GET /status: a node
// that takes longer is paused, cut off from the controller, or down.
const chaosNodeStatusTimeout = 300 * time.Millisecond

// States implements StateReporter: every node's GET /status, at once.
// chaos-node does not report its vote.
func (c *ChaosNode) States(ctx context.Context, nodes []Node) (map[string]NodeState, error) {
	hc := &http.Client{Timeout: chaosNodeStatusTimeout}
	var mu sync.Mutex
	out := map[string]NodeState{}
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			st, err := nodeapi.NewClient(c.ClientAddr(n), hc).Status(ctx)
			if err != nil {
				return // down, paused or cut off: no state
			}
			mu.Lock()
			defer mu.Unlock()
			out[n.Name] = NodeState{Role: st.Role, Term: st.Term, Leader: st.Leader, Commit: st.Commit,
				Applied: st.Applied, LastIndex: st.LastIndex, Abstaining: st.Abstaining}
		})
	}
	wg.Wait()
	return out, ctx.Err()
}
