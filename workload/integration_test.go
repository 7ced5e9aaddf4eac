//go:build linux

package workload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
	"chaos/node"
)

// The integration tests run three chaos-nodes in this process, each on its
// own loopback address 127.0.0.<base+i> (Linux routes all of 127/8 to lo)
// with the same fixed ports; each test has its own block of addresses.
const (
	itClientPort = "7300"
	itPeerPort   = "7301"
)

// itCluster is three in-process chaos-nodes, n1..n3.
type itCluster struct {
	t       *testing.T
	names   []string
	servers []*node.Server
	addrs   []string // client addresses, by index
}

// startITCluster starts the three nodes on 127.0.0.<base+1..base+3> with
// fast raft timings, the given planted bugs and the fault hooks enabled.
func startITCluster(t *testing.T, base int, bugs ...string) *itCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: runs a three-node chaos-node cluster")
	}
	c := &itCluster{t: t}
	peers := map[string]string{}
	for i := 1; i <= 3; i++ {
		ip := "127.0.0." + strconv.Itoa(base+i)
		name := "n" + strconv.Itoa(i)
		c.names = append(c.names, name)
		c.addrs = append(c.addrs, net.JoinHostPort(ip, itClientPort))
		peers[name] = net.JoinHostPort(ip, itPeerPort)
	}
	dir := t.TempDir()
	for i, name := range c.names {
		s, err := node.New(node.Config{Name: name, DataDir: filepath.Join(dir, name),
			ClientAddr: c.addrs[i], PeerAddr: peers[name], Peers: peers,
			HeartbeatInterval: 20 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond,
			RequestTimeout: time.Second, Bugs: bugs, EnableFaultHooks: true, Seed: uint64(base + i)})
		require.NoError(t, err, "node %s", name)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			assert.NoError(t, s.Stop(ctx), "stop %s", name)
		})
		require.NoError(t, s.Start(), "start %s", name)
		c.servers = append(c.servers, s)
	}
	return c
}

// waitLeader waits until every node names the same leader, which says it
// leads, and returns its index.
func (c *itCluster) waitLeader() int {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if i, ok := c.agreedLeader(); ok {
			return i
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("no agreed leader within 10s")
	return -1
}

func (c *itCluster) agreedLeader() (int, bool) {
	leader := c.servers[0].Status().Leader
	for _, s := range c.servers {
		if st := s.Status(); leader == "" || st.Leader != leader {
			return 0, false
		}
	}
	for i, name := range c.names {
		if name == leader && c.servers[i].Status().Role == "leader" {
			return i, true
		}
	}
	return 0, false
}

// clients binds concurrency ChaosNodeClients round-robin to the nodes.
func (c *itCluster) clients(concurrency int) []Client {
	c.t.Helper()
	clients, err := BindClients(concurrency, len(c.names), func(i int) (Client, error) {
		return NewChaosNodeClient(c.names[i], c.addrs[i], ChaosNodeOptions{})
	})
	require.NoError(c.t, err)
	c.t.Cleanup(func() {
		for _, cl := range clients {
			_ = cl.Close()
		}
	})
	return clients
}

// postFault sends a fault-hook request to node i.
func (c *itCluster) postFault(i int, path, body string) {
	c.t.Helper()
	resp, err := http.Post("http://"+c.addrs[i]+path, "application/json", bytes.NewBufferString(body))
	require.NoError(c.t, err)
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	require.Equal(c.t, http.StatusOK, resp.StatusCode, "POST %s to %s: %s", path, c.names[i], msg)
}

// isolate cuts node i off from the others, in both directions.
func (c *itCluster) isolate(i int) {
	c.t.Helper()
	var others []string
	for j, name := range c.names {
		if j != i {
			others = append(others, strconv.Quote(name))
			c.postFault(j, "/faults/partition", fmt.Sprintf(`{"drop":[%q]}`, c.names[i]))
		}
	}
	c.postFault(i, "/faults/partition", fmt.Sprintf(`{"drop":[%s,%s]}`, others[0], others[1]))
}

// runLoad runs gen for limit with concurrency clients of c, streaming the
// history to a file as chaos run does, and returns the recorder (still
// open, for a final read) and the clients.
func (c *itCluster) runLoad(gen Generator, concurrency int, limit time.Duration) (*history.Recorder, []Client, Stats) {
	t := c.t
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "history.jsonl"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	start := time.Now()
	rec := history.NewRecorder(f, func() time.Duration { return time.Since(start) }, history.RecorderOptions{})
	t.Cleanup(func() { _ = rec.Close() })
	clients := c.clients(concurrency)
	r, err := NewRunner(Config{Clients: clients, Generator: gen, Recorder: rec,
		TimeLimit: limit, RequestTimeout: 2 * time.Second, Seed: 1})
	require.NoError(t, err)
	stats, err := r.Run(t.Context())
	require.NoError(t, err)
	t.Logf("load: %d ops in %v (%.0f ops/s): %d ok, %d fail, %d info",
		stats.Invoked, stats.Elapsed.Round(time.Millisecond), stats.OpsPerSecond(), stats.OK, stats.Fail, stats.Info)
	return rec, clients, stats
}

func checkHistory(t *testing.T, rec *history.Recorder) checker.Report {
	t.Helper()
	require.NoError(t, rec.Close())
	h := rec.Ops()
	require.NoError(t, history.Validate(h))
	report, err := checker.CheckAll(t.Context(), h, checker.Options{
		Linearizable: checker.LinearizableOptions{Timeout: time.Minute}})
	require.NoError(t, err)
	return report
}

func TestIntegrationRegister(t *testing.T) {
	c := startITCluster(t, 30)
	c.waitLeader()
	gen, err := NewRegister(10)
	require.NoError(t, err)
	rec, _, stats := c.runLoad(gen, 6, 3*time.Second)
	assert.Greater(t, stats.OK, int64(300), "a healthy cluster serves hundreds of ops in 3 s")
	report := checkHistory(t, rec)
	assert.Equal(t, checker.Valid, report.Valid, "%+v", report.Checks)
}

func TestIntegrationSet(t *testing.T) {
	c := startITCluster(t, 33)
	c.waitLeader()
	gen := NewSet()
	rec, clients, stats := c.runLoad(gen, 6, 2*time.Second)
	assert.Greater(t, stats.OK, int64(100))

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, FinalSetRead(ctx, clients[:3], gen.Attempted(), rec)) // one per node
	h := rec.Ops()
	for _, op := range h[len(h)-6:] {
		require.NotEqual(t, history.Fail, op.Type, "final read: %s", op.Error)
	}
	report := checkHistory(t, rec)
	assert.Equal(t, checker.Valid, report.Valid, "%+v", report.Checks)
	d := report.Checks["set"].Details.(*checker.SetDetails)
	assert.Empty(t, d.Lost)
	assert.EqualValues(t, stats.OK, d.Acknowledged)
}

// TestIntegrationIsolatedFollower isolates a follower while the load runs
// on every node. Without planted bugs the history stays linearizable: the
// follower's reads and writes fail or wait for a leader. With stale-read
// (a follower answers reads from its own state) its reads miss every write
// the majority makes, and the checker must say so.
func TestIntegrationIsolatedFollower(t *testing.T) {
	for _, tc := range []struct {
		bug  string
		base int
		want checker.Validity
	}{
		{bug: "", base: 45, want: checker.Valid},
		{bug: "stale-read", base: 36, want: checker.Invalid},
	} {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			var bugs []string
			if tc.bug != "" {
				bugs = append(bugs, tc.bug)
			}
			c := startITCluster(t, tc.base, bugs...)
			c.isolate((c.waitLeader() + 1) % 3)
			gen, err := NewRegister(10)
			require.NoError(t, err)
			rec, _, _ := c.runLoad(gen, 6, 2*time.Second)
			report := checkHistory(t, rec)
			lin := report.Checks["linearizable"]
			assert.Equal(t, tc.want, lin.Valid, "%+v", lin.Details)
		})
	}
}
