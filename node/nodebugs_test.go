//go:build linux

package node_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/eventlog"
	"chaos/history"
	"chaos/workload"
)

// chaos-node's own planted bugs, provoked on real processes and judged the
// way a run judges them: scripted register operations go through
// workload's chaos-node client into a history, and the linearizability
// checker must call the history invalid with the bug and valid without it.

// recordedClients performs register operations on nodes and records them
// as a run does, each on a process of its own.
type recordedClients struct {
	t       *testing.T
	rec     *history.Recorder
	clients map[string]*workload.ChaosNodeClient
	process int
}

func newRecordedClients(t *testing.T, c *cluster) *recordedClients {
	t.Helper()
	start := time.Now()
	r := &recordedClients{t: t, clients: map[string]*workload.ChaosNodeClient{},
		rec: history.NewRecorder(nil, func() time.Duration { return time.Since(start) },
			history.RecorderOptions{PanicOnInvalid: true})}
	t.Cleanup(func() { _ = r.rec.Close() })
	for _, p := range c.nodes {
		cl, err := workload.NewChaosNodeClient(p.name, p.clientAddr(), workload.ChaosNodeOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		r.clients[p.name] = cl
	}
	return r
}

// do performs one operation through p, giving up after timeout (which
// records it as the client classifies a timeout: info for a write, fail
// for a read).
func (r *recordedClients) do(p *proc, f string, value any, timeout time.Duration) history.Outcome {
	r.t.Helper()
	pend, err := r.rec.Invoke(r.process, f, "k", value)
	require.NoError(r.t, err)
	r.process++
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	out := r.clients[p.name].Do(ctx, workload.Op{F: f, Key: "k", Value: value})
	cancel()
	require.NoError(r.t, r.rec.Complete(pend, out))
	return out
}

// untilOK repeats an operation through p until one is ok, for at most d;
// every try is recorded. Only reads, and writes of a value no other write
// uses, may be repeated.
func (r *recordedClients) untilOK(p *proc, f string, value any, d time.Duration) history.Outcome {
	r.t.Helper()
	var out history.Outcome
	waitFor(r.t, d, f+" through "+p.name, func() error {
		if out = r.do(p, f, value, time.Second); out.Type != history.OK {
			return errors.New(out.Error)
		}
		return nil
	})
	return out
}

// verdict checks the recorded history for linearizability.
func (r *recordedClients) verdict() checker.Result {
	r.t.Helper()
	res, err := checker.Linearizable(context.Background(), r.rec.Ops(), checker.LinearizableOptions{Timeout: time.Minute})
	require.NoError(r.t, err)
	return res
}

// TestRealRunNodeBugs drives a cluster into the situation each bug needs.
// Every script starts with k = 1 written through the leader, and ends with
// the operation the bug answers wrongly.
func TestRealRunNodeBugs(t *testing.T) {
	scripts := []struct {
		bug    string
		base   int
		script func(t *testing.T, c *cluster, r *recordedClients)
	}{
		{"stale-read", 140, staleReadScript},
		{"dirty-read", 160, dirtyReadScript},
		{"ack-before-commit", 180, ackBeforeCommitScript},
		{"lease-read", 200, leaseReadScript},
	}
	for _, s := range scripts {
		for _, planted := range []bool{true, false} {
			name, bug, base, want := s.bug, s.bug, s.base, checker.Invalid
			if !planted {
				name, bug, base, want = s.bug+"-script-on-correct-nodes", "", s.base+10, checker.Valid
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := scriptCluster(t, base, bug)
				r := newRecordedClients(t, c)
				s.script(t, c, r)
				res := r.verdict()
				require.Equal(t, want, res.Valid, "history %v\ndetails %+v", r.rec.Ops(), res.Details)
			})
		}
	}
}

// leaderWithOne waits for a leader and writes k = 1 through it.
func leaderWithOne(t *testing.T, c *cluster, r *recordedClients) (*proc, []*proc) {
	t.Helper()
	l, _ := c.waitLeader()
	r.untilOK(l, history.FWrite, int64(1), 10*time.Second)
	return l, c.followers(l)
}

// cutOff isolates p from peers, on both sides.
func (c *cluster) cutOff(p *proc, peers ...*proc) {
	c.t.Helper()
	c.drop(p, peers...)
	for _, q := range peers {
		c.drop(q, p)
	}
}

// staleReadScript: a follower cut off from the others misses k = 2, then
// answers a linearizable read, which stale-read serves from its own state.
func staleReadScript(t *testing.T, c *cluster, r *recordedClients) {
	l, f := leaderWithOne(t, c, r)
	c.waitCaughtUp()
	c.cutOff(f[0], l, f[1])
	r.untilOK(l, history.FWrite, int64(2), 10*time.Second)
	r.do(f[0], history.FRead, nil, time.Second)
}

// dirtyReadScript: the leader, cut off, appends k = 2 that can never
// commit, and dirty-read answers a read with it; the rest of the cluster
// then reads k = 1.
func dirtyReadScript(t *testing.T, c *cluster, r *recordedClients) {
	l, f := leaderWithOne(t, c, r)
	c.cutOff(l, f...)
	r.do(l, history.FWrite, int64(2), 300*time.Millisecond)
	r.do(l, history.FRead, nil, 300*time.Millisecond)
	r.untilOK(f[0], history.FRead, nil, 20*time.Second)
}

// ackBeforeCommitScript: the leader, cut off, acknowledges k = 2 that can
// never commit; the rest of the cluster then reads k = 1.
func ackBeforeCommitScript(t *testing.T, c *cluster, r *recordedClients) {
	l, f := leaderWithOne(t, c, r)
	c.cutOff(l, f...)
	r.do(l, history.FWrite, int64(2), 500*time.Millisecond)
	r.untilOK(f[0], history.FRead, nil, 20*time.Second)
}

// leaseReadScript: the leader's clock runs at a twentieth of real speed,
// so its lease outlasts its leadership: cut off, it still believes it
// leads when the others have elected a new leader that wrote k = 2, and
// lease-read answers a read from its lease with k = 1.
func leaseReadScript(t *testing.T, c *cluster, r *recordedClients) {
	l, f := leaderWithOne(t, c, r)
	st, err := c.status(l)
	require.NoError(t, err)
	// A read confirms l's leadership with a heartbeat round a quorum
	// acknowledges, which starts its lease.
	r.untilOK(l, history.FRead, nil, 10*time.Second)
	c.hook(l, http.MethodPost, "/faults/clock", map[string]any{"rate": 0.05})
	c.cutOff(l, f...)
	e, ok := awaitEvent(t, 5*scriptElection, f, func(e eventlog.Event) bool {
		return e.Event == "role" && e.Role == "leader" && e.Term > st.Term
	})
	require.True(t, ok, "no new leader among %s and %s", f[0].name, f[1].name)
	r.untilOK(c.byName[e.Node], history.FWrite, int64(2), 10*time.Second)
	r.do(l, history.FRead, nil, 500*time.Millisecond)
}
