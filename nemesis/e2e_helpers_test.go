package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/testbed"
)

// Helpers shared by the end-to-end tests on a testbed (e2e_*_test.go).

// Bounds of the end-to-end tests' polling.
const (
	bedPoll     = 50 * time.Millisecond
	bedDeadline = 15 * time.Second
)

// bedStatus is chaos-node's GET /status.
type bedStatus struct {
	Role    string `json:"role"`
	Term    uint64 `json:"term"`
	Leader  string `json:"leader"`
	Applied uint64 `json:"applied"`
}

// bedGetJSON GETs url within timeout and decodes a 200 answer into v.
func bedGetJSON(ctx context.Context, url string, timeout time.Duration, v any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %s", url, resp.StatusCode, body)
	}
	return json.Unmarshal(body, v)
}

// bedLeader returns the node that reports itself leader, among nodes.
func bedLeader(ctx context.Context, d db.DB, nodes []db.Node) (string, error) {
	for _, n := range nodes {
		var st bedStatus
		if bedGetJSON(ctx, "http://"+d.ClientAddr(n)+"/status", 300*time.Millisecond, &st) == nil && st.Role == "leader" {
			return n.Name, nil
		}
	}
	return "", errors.New("no node reports itself leader")
}

// bedDeploy dials the hosts of the testbed st in dir over SSH and starts
// bin's chaos-node on each, with fault hooks and the given raft timing,
// every host at once (each SSH command costs a good part of a second on a
// loaded machine). It returns once every node is ready and one reports
// itself leader; the cluster's Leader is bedLeader. The nodes stop when
// the test ends. bugs are planted in every node.
func bedDeploy(ctx context.Context, t *testing.T, dir string, st testbed.State, bin string, heartbeat, election time.Duration,
	bugs ...string) *Cluster {
	t.Helper()
	cfg := control.SSHConfig{KeyFiles: []string{filepath.Join(dir, testbed.KeyFile)},
		KnownHosts: filepath.Join(dir, testbed.KnownHostsFile)}
	dialer, err := control.NewSSHDialer(cfg)
	require.NoError(t, err)
	addrs := map[string]string{}
	c := &Cluster{Remotes: map[string]control.Remote{}, Hooks: &db.ChaosNodeHooks{Addrs: addrs}, SharedClock: true}
	for _, h := range st.Hosts {
		c.Nodes = append(c.Nodes, db.Node{Name: h.Name, Addr: h.Addr})
	}
	d := &db.ChaosNode{Binary: bin, Upload: true, FaultHooks: true, Layout: db.DefaultLayout(), Nodes: c.Nodes,
		Heartbeat: heartbeat, Election: election, Bugs: bugs}
	c.DB, c.Timing = d, d.Capabilities().Timing
	c.Leader = func(ctx context.Context) (string, error) { return bedLeader(ctx, d, c.Nodes) }
	remotes := make([]control.Remote, len(c.Nodes))
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, n := range c.Nodes {
		wg.Go(func() { remotes[i], errs[i] = bedInstall(ctx, dialer, d, n) })
	}
	wg.Wait()
	for i, n := range c.Nodes {
		if r := remotes[i]; r != nil {
			c.Remotes[n.Name] = r
			t.Cleanup(func() { _ = r.Close() })
			t.Cleanup(func() { _ = d.Stop(context.Background(), r, n) })
		}
		addrs[n.Name] = d.ClientAddr(n)
	}
	require.NoError(t, errors.Join(errs...))
	for _, n := range c.Nodes {
		require.NoError(t, d.Ready(ctx, n))
	}
	require.Eventually(t, func() bool {
		_, err := bedLeader(ctx, d, c.Nodes)
		return err == nil
	}, bedDeadline, bedPoll, "the cluster elects a leader")
	return c
}

// bedInstall dials n's host, installs d there and starts n. The Remote is
// returned, to be closed, whenever the dial succeeded.
func bedInstall(ctx context.Context, dialer *control.SSHDialer, d db.DB, n db.Node) (control.Remote, error) {
	r, err := dialer.Dial(ctx, n.Addr)
	if err != nil {
		return nil, err
	}
	if err := d.Install(ctx, r, n); err != nil {
		return r, err
	}
	return r, d.Start(ctx, r, n)
}

// bedStep returns a context for one step of an end-to-end test, with a
// bound of its own: the steps of a test have no deadline in common, which
// a loaded machine would make every step pay for.
func bedStep(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
