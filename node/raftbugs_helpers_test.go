//go:build linux

package node_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/eventlog"
)

// captureEvents, when set, makes each planted-bug scenario copy its nodes'
// event logs to DIR/<scenario>/nodes/<node>/events.jsonl, the layout of a
// run directory. That is how raftcheck/testdata/real was made:
//
//	go test ./node -run TestRealRun -capture-events $PWD/raftcheck/testdata/real
var captureEvents = flag.String("capture-events", "", "copy the planted-bug scenarios' event logs into `DIR`/<scenario>/nodes/<node>/events.jsonl")

// Timings of the planted-bug scenarios. The script acts on what the event
// logs show; the slow link gives it slowLinkMS to act between a vote (or a
// commit) and the message that would follow it, far more than the 50 ms a
// node may take to write a commit event out (votes and role changes are
// written before any message shows them) plus the 5 ms the script polls at.
const (
	scriptHeartbeat = "100ms"
	scriptElection  = 3 * time.Second
	slowLinkMS      = 200
	scriptAttempts  = 5
)

// nodeEvents reads p's events.jsonl as it is now; a torn last line (the
// node is writing) is skipped.
func nodeEvents(t *testing.T, p *proc) []eventlog.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(p.dataDir, "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	evs, _, err := eventlog.ReadEvents(f)
	require.NoError(t, err, "%s events.jsonl", p.name)
	return evs
}

// awaitEvent polls the event logs of nodes every 5 ms until one of them
// holds an event match accepts, for at most d. The second result is false
// if none appeared in time.
func awaitEvent(t *testing.T, d time.Duration, nodes []*proc, match func(eventlog.Event) bool) (eventlog.Event, bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		for _, p := range nodes {
			for _, e := range nodeEvents(t, p) {
				if match(e) {
					return e, true
				}
			}
		}
		if time.Now().After(deadline) {
			return eventlog.Event{}, false
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronization
	}
}

// isVote matches a vote by one of voters for another node, in a term after
// term.
func isVote(voters []*proc, after uint64) func(eventlog.Event) bool {
	return func(e eventlog.Event) bool {
		return e.Event == "vote" && e.Term > after && e.For != e.Node &&
			slices.ContainsFunc(voters, func(p *proc) bool { return p.name == e.Node })
	}
}

// isLeader matches node becoming leader in a term after term.
func isLeader(node string, after uint64) func(eventlog.Event) bool {
	return func(e eventlog.Event) bool {
		return e.Event == "role" && e.Role == "leader" && e.Node == node && e.Term > after
	}
}

// tooLate reports whether an action taken now, in reaction to e, may have
// missed the window the slow link opened after it.
func tooLate(e eventlog.Event) bool {
	return time.Since(e.Time) > slowLinkMS*time.Millisecond*3/4
}

// hook sends one fault-hook request to p and requires a 200.
func (c *cluster) hook(p *proc, method, path string, body any) {
	c.t.Helper()
	var b []byte
	if body != nil {
		b = jsonBody(body)
	}
	r := c.mustDo(p, method, path, b)
	require.Equal(c.t, http.StatusOK, r.code, "%s %s on %s: %s", method, path, p.name, r)
}

// drop replaces p's drop list: p discards every message to and from peers,
// including messages to them still waiting out a delay.
func (c *cluster) drop(p *proc, peers ...*proc) {
	c.t.Helper()
	names := []string{}
	for _, q := range peers {
		names = append(names, q.name)
	}
	c.hook(p, http.MethodPost, "/faults/partition", map[string]any{"drop": names})
}

// slowLink delays every message from p to q by slowLinkMS.
func (c *cluster) slowLink(p, q *proc) {
	c.t.Helper()
	c.hook(p, http.MethodPost, "/faults/net", map[string]any{"peers": []string{q.name}, "delay_ms": slowLinkMS})
}

// loseFrom makes p lose every message it sends to q from now on; messages
// already delayed still leave, and p still hears q.
func (c *cluster) loseFrom(p, q *proc) {
	c.t.Helper()
	c.hook(p, http.MethodPost, "/faults/net", map[string]any{"peers": []string{q.name}, "loss": 1})
}

// isolate leaves p with exactly one fault: it drops peers. The drop list is
// replaced before the message faults are cleared, so p never talks to a
// peer in between.
func (c *cluster) isolate(p *proc, peers ...*proc) {
	c.t.Helper()
	c.drop(p, peers...)
	c.hook(p, http.MethodDelete, "/faults/net", nil)
}

// clearFaults removes every fault p's hooks hold.
func (c *cluster) clearFaults(p *proc) {
	c.t.Helper()
	c.hook(p, http.MethodDelete, "/faults", nil)
}

// healAll clears the faults of every live node.
func (c *cluster) healAll() {
	c.t.Helper()
	for _, p := range c.live() {
		c.clearFaults(p)
	}
}

// cutAfterVote makes sure voter v hears nothing more from candidate x,
// whose election v's vote may just have decided, while x still receives
// the vote. slow is the node whose outbound link the script delayed: if it
// is x, x's next messages to v wait in x's delay queue, which a drop
// empties; if it is v, v's vote is still on its way to x, so only x's later
// messages may be lost. The other drops x keeps are passed in keep.
func (c *cluster) cutAfterVote(x, v, slow *proc, keep ...*proc) {
	c.t.Helper()
	if x == slow {
		c.drop(x, append(keep, v)...)
		return
	}
	c.loseFrom(x, v)
}

// put sends one write to p and does not wait for its outcome beyond a
// moment: the script needs the entry appended, not committed.
func (c *cluster) put(p *proc, key, value string) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _ = do(ctx, c.hc, http.MethodPut, p.url("/kv/"+key), jsonBody(map[string]string{"value": value}))
}

// stopAll stops every live node with SIGTERM, so each flushes its event log
// and logs a stop event. The scripts stop their clusters with the faults
// still in place: healed, a node that applied an entry the others
// overwrote would find its log in conflict with what it committed.
func (c *cluster) stopAll() {
	c.t.Helper()
	for _, p := range c.live() {
		p.signal(syscall.SIGTERM)
	}
	for _, p := range c.nodes {
		if p.startCount() > 0 {
			require.Equal(c.t, 0, p.waitExit(10*time.Second), "%s exit code after SIGTERM", p.name)
		}
	}
}

// runEvents returns every node's events, merged as eventlog.LoadRun
// merges a run's, and copies the logs to -capture-events DIR/scenario.
func (c *cluster) runEvents(scenario string) []eventlog.Event {
	c.t.Helper()
	dir := filepath.Join(c.t.TempDir(), scenario)
	if *captureEvents != "" {
		dir = filepath.Join(*captureEvents, scenario)
		require.NoError(c.t, os.RemoveAll(dir))
	}
	for _, p := range c.nodes {
		b, err := os.ReadFile(filepath.Join(p.dataDir, "events.jsonl"))
		require.NoError(c.t, err)
		to := filepath.Join(dir, "nodes", p.name, "events.jsonl")
		require.NoError(c.t, os.MkdirAll(filepath.Dir(to), 0o755))
		require.NoError(c.t, os.WriteFile(to, b, 0o644))
	}
	evs, _, err := eventlog.LoadRun(dir)
	require.NoError(c.t, err)
	return evs
}

// retryScript runs attempt until it reports that the interleaving it needs
// happened, at most scriptAttempts times; between attempts every fault is
// healed. An attempt fails when elections go another way than the script
// needs (a split vote, say), which timing decides.
func retryScript(t *testing.T, c *cluster, attempt func(n int) error) {
	t.Helper()
	var errs []error
	for n := 1; n <= scriptAttempts; n++ {
		err := attempt(n)
		if err == nil {
			return
		}
		t.Logf("attempt %d: %v; healing and trying again", n, err)
		errs = append(errs, fmt.Errorf("attempt %d: %w", n, err))
		c.healAll()
	}
	t.Fatalf("the scripted interleaving never happened: %v", errors.Join(errs...))
}
