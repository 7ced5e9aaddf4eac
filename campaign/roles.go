package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"sync"
	"time"

	"chaos/cluster"
	"chaos/control"
	"chaos/db"
	"chaos/nemesis"
	"chaos/node/eventlog"
	"chaos/node/nodeapi"
)

// What the targeted faults learn of the nodes' roles besides who leads:
// each node's own state and the newest lines of its event log. chaos-node
// reports both (GET /status, events.jsonl in its log directory); other
// systems report neither, and the faults that need them are unavailable.

// statusTimeout bounds one node's answer to GET /status: a node that takes
// longer is paused, cut off from the controller, or down.
const statusTimeout = 300 * time.Millisecond

// eventTail is how many of a log's newest lines a look at it reads: a
// busy node writes a few hundred a second, and the targeted faults look
// every few milliseconds for a vote just cast.
const eventTail = 200

// nodeStates returns Cluster.States for the system, nil when it cannot say.
func nodeStates(c *cluster.Cluster) func(ctx context.Context) (map[string]nemesis.NodeState, error) {
	d, ok := c.DB.(*db.ChaosNode)
	if !ok {
		return nil
	}
	hc := &http.Client{Timeout: statusTimeout}
	return func(ctx context.Context) (map[string]nemesis.NodeState, error) {
		var mu sync.Mutex
		out := map[string]nemesis.NodeState{}
		var wg sync.WaitGroup
		for _, n := range c.Nodes {
			wg.Go(func() {
				st, err := nodeapi.NewClient(d.ClientAddr(n), hc).Status(ctx)
				if err != nil {
					return // down, paused or cut off: no state
				}
				mu.Lock()
				defer mu.Unlock()
				out[n.Name] = nemesis.NodeState{Role: st.Role, Term: st.Term, Leader: st.Leader,
					Commit: st.Commit, LastIndex: st.LastIndex}
			})
		}
		wg.Wait()
		return out, ctx.Err()
	}
}

// nodeEvents returns Cluster.Events for the system, nil when it keeps no
// event logs.
func nodeEvents(c *cluster.Cluster) func(ctx context.Context, node string) ([]eventlog.Event, error) {
	d, ok := c.DB.(*db.ChaosNode)
	if !ok {
		return nil
	}
	return func(ctx context.Context, node string) ([]eventlog.Event, error) {
		r := c.Remotes[node]
		if r == nil {
			return nil, fmt.Errorf("%s: no remote for the node's host", node)
		}
		file := path.Join(d.Layout.NodeDir(d.Name(), db.Node{Name: node}), eventlog.FileName)
		out, err := control.Output(ctx, r, fmt.Sprintf("tail -n %d %s", eventTail, control.ShellQuote(file)))
		if err != nil {
			return nil, fmt.Errorf("%s: read events: %w", node, err)
		}
		return parseEventLines(out), nil
	}
}

// parseEventLines reads the lines of an event log's tail; a line that is
// not a whole event (the node is writing it) is left out.
func parseEventLines(b []byte) []eventlog.Event {
	var evs []eventlog.Event
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		var e eventlog.Event
		if len(line) > 0 && json.Unmarshal(line, &e) == nil && e.Event != "" {
			evs = append(evs, e)
		}
	}
	return evs
}
