package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/workload"
)

// cluster is the system under test on its hosts.
type cluster struct {
	nodes   []db.Node
	remotes map[string]control.Remote
	db      db.DB
	local   bool
	workDir string   // local mode: where the nodes keep their data
	lock    *os.File // local mode: held while this run owns the local nodes
}

// lockLocalMode takes the lock that keeps two local-mode runs on one
// machine from driving the same five nodes.
func lockLocalMode(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "run.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another chaos run is using local mode on this machine (%s is locked); wait for it or stop it", dir)
	}
	return f, nil
}

// localAddrs are local mode's node addresses (CONTRACT.md).
func localAddrs() []string {
	return []string{"127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14", "127.0.0.15"}
}

// LocalDataDir is where local mode's nodes keep their data and pidfiles:
// a fixed place, so `chaos heal` finds them after a controller crash.
// It is per user, so runs of different users do not share it.
func LocalDataDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("chaos-local-%d", os.Getuid()))
}

// connect reaches every host: locally, or over SSH in parallel. Every host
// that cannot be reached is named in the error.
func connect(ctx context.Context, o *Options) (*cluster, error) {
	c := &cluster{remotes: map[string]control.Remote{}, local: len(o.Nodes) == 0}
	hosts := o.Nodes
	if c.local {
		hosts = localAddrs()
	}
	for i, h := range hosts {
		addr := h
		if host, _, err := net.SplitHostPort(h); err == nil {
			addr = host
		}
		c.nodes = append(c.nodes, db.Node{Name: fmt.Sprintf("n%d", i+1), Addr: addr})
	}
	if c.local {
		for _, n := range c.nodes {
			c.remotes[n.Name] = control.NewLocal(n.Name)
		}
		c.workDir = LocalDataDir()
		if err := os.MkdirAll(c.workDir, 0o755); err != nil {
			return nil, err
		}
		lock, err := lockLocalMode(c.workDir)
		if err != nil {
			return nil, err
		}
		c.lock = lock
	} else if err := c.dial(ctx, hosts, o.SSH); err != nil {
		return nil, err
	}
	c.db = c.newDB(o)
	return c, nil
}

func (c *cluster) dial(ctx context.Context, hosts []string, cfg control.SSHConfig) error {
	dialer, err := control.NewSSHDialer(cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := dialer.Dial(ctx, h)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			c.remotes[c.nodes[i].Name] = r
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		c.close(false)
		return errors.Join(errs...)
	}
	return nil
}

func (c *cluster) newDB(o *Options) db.DB {
	layout := db.DefaultLayout()
	if c.local {
		layout = db.Layout{BinDir: filepath.Join(c.workDir, "bin"), DataDir: c.workDir}
	}
	if o.DB == "etcd" {
		return &db.Etcd{Binary: o.Binary, Layout: layout, Nodes: c.nodes}
	}
	return &db.ChaosNode{Binary: o.Binary, Upload: !c.local, Layout: layout, Nodes: c.nodes,
		Bugs: o.Bugs, FaultHooks: true}
}

// each runs f for every node in parallel and joins the errors.
func (c *cluster) each(f func(n db.Node, r control.Remote) error) error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(n, c.remotes[n.Name])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// setup starts every node from empty data and waits until each answers.
func (c *cluster) setup(ctx context.Context) error {
	err := c.each(func(n db.Node, r control.Remote) error {
		if err := c.db.Stop(ctx, r, n); err != nil {
			return err
		}
		if err := c.db.Wipe(ctx, r, n); err != nil {
			return err
		}
		if err := c.db.Install(ctx, r, n); err != nil {
			return err
		}
		return c.db.Start(ctx, r, n)
	})
	if err != nil {
		return err
	}
	ready, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.each(func(n db.Node, _ control.Remote) error { return c.db.Ready(ready, n) }); err != nil {
		return err
	}
	if c.db.Name() != "chaos-node" {
		return nil // etcd's health check already waits for a leader
	}
	return c.waitLeader(ready)
}

// waitLeader polls until the nodes report a leader.
func (c *cluster) waitLeader(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := c.leader(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no leader elected: %w", err)
		case <-tick.C:
		}
	}
}

// teardown stops every node unless asked to leave them running, and pulls
// every node's logs into dir/<node>/ either way.
func (c *cluster) teardown(ctx context.Context, dir string, leaveRunning bool) error {
	return c.each(func(n db.Node, r control.Remote) error {
		var errs []error
		if !leaveRunning {
			errs = append(errs, c.db.Stop(ctx, r, n))
		}
		errs = append(errs, c.db.CollectLogs(ctx, r, n, filepath.Join(dir, n.Name)))
		return errors.Join(errs...)
	})
}

// close releases the connections and, in local mode, the nodes' data
// unless they were left running.
func (c *cluster) close(leaveRunning bool) {
	for _, r := range c.remotes {
		_ = r.Close()
	}
	if c.workDir != "" && !leaveRunning {
		_ = os.RemoveAll(filepath.Join(c.workDir, "chaos-node"))
	}
	if c.lock != nil {
		_ = c.lock.Close()
	}
}

// clients makes one client per worker, bound to nodes round robin.
func (c *cluster) clients(concurrency int) ([]workload.Client, error) {
	return workload.BindClients(concurrency, len(c.nodes), func(i int) (workload.Client, error) {
		n := c.nodes[i]
		if c.db.Name() == "etcd" {
			return workload.NewEtcdClient(n.Name, c.db.ClientAddr(n), workload.EtcdOptions{})
		}
		return workload.NewChaosNodeClient(n.Name, c.db.ClientAddr(n), workload.ChaosNodeOptions{})
	})
}

// leader asks the nodes who leads: the leader named by the node with the
// highest term (chaos-node's /status). Other systems report none.
func (c *cluster) leader(ctx context.Context) (string, error) {
	if c.db.Name() != "chaos-node" {
		return "", errors.New("leader discovery is implemented for chaos-node only")
	}
	client := &http.Client{Timeout: 500 * time.Millisecond}
	var best struct {
		Term   uint64 `json:"term"`
		Leader string `json:"leader"`
	}
	for _, n := range c.nodes {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.db.ClientAddr(n)+"/status", nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		var st struct {
			Term   uint64 `json:"term"`
			Leader string `json:"leader"`
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err == nil && st.Leader != "" && st.Term >= best.Term {
			best = st
		}
	}
	if best.Leader == "" {
		return "", errors.New("no node reports a leader")
	}
	return strings.TrimSpace(best.Leader), nil
}

// hookAddrs are the nodes' fault-hook addresses (chaos-node only).
func (c *cluster) hookAddrs() map[string]string {
	out := map[string]string{}
	if c.db.Name() != "chaos-node" {
		return out
	}
	for _, n := range c.nodes {
		out[n.Name] = c.db.ClientAddr(n)
	}
	return out
}
