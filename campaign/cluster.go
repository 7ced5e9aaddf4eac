package campaign

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/db/described"
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
	// sharedClock is true when some host runs on this machine's kernel
	// (local mode, the testbed): its system clock is the controller's.
	sharedClock bool
	// readConsistency is the clients' --read-consistency.
	readConsistency string
	// made are every client made, for their summary in results.json.
	made []workload.Client
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

// localAddrs are local mode's node addresses (docs/FORMATS.md).
func localAddrs() []string {
	return []string{"127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14", "127.0.0.15"}
}

// LocalDataDir is where local mode's nodes keep their data and pidfiles:
// a fixed place, so `chaos heal` finds them after a controller crash.
// It is per user, so runs of different users do not share it.
func LocalDataDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("chaos-local-%d", os.Getuid()))
}

// LocalLayout is where local mode's nodes keep their binaries and data.
func LocalLayout() db.Layout {
	dir := LocalDataDir()
	return db.Layout{BinDir: filepath.Join(dir, "bin"), DataDir: dir}
}

// Nodes names the hosts n1, n2, ... in the order given, each bound to its
// host's address (the host without an SSH port or IPv6 brackets). No hosts
// means local mode's five nodes. Every command names nodes this way, so a
// node is the same node to run, heal and the store.
func Nodes(hosts []string) []db.Node {
	if len(hosts) == 0 {
		hosts = localAddrs()
	}
	nodes := make([]db.Node, len(hosts))
	for i, h := range hosts {
		addr := h
		if host, _, err := net.SplitHostPort(h); err == nil {
			addr = host
		}
		nodes[i] = db.Node{Name: fmt.Sprintf("n%d", i+1), Addr: strings.Trim(addr, "[]")}
	}
	return nodes
}

// connect reaches every host: locally, or over SSH in parallel. Every host
// that cannot be reached is named in the error.
func connect(ctx context.Context, o *Options) (*cluster, error) {
	c := &cluster{remotes: map[string]control.Remote{}, local: len(o.Nodes) == 0, nodes: Nodes(o.Nodes),
		readConsistency: o.ReadConsistency}
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
	} else if err := c.dial(ctx, o.Nodes, o.SSH); err != nil {
		return nil, err
	}
	c.sharedClock = c.local || sharesClock(ctx, c.remotes, localBootID())
	layout := db.DefaultLayout()
	if c.local {
		layout = LocalLayout()
	}
	d, err := o.newDB(db.Config{Nodes: c.nodes, Layout: layout, Binary: o.Binary, Upload: !c.local, Bugs: o.Bugs})
	if err != nil {
		c.close(false)
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	c.db = d
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
	if _, ok := c.db.(db.LeaderFinder); !ok {
		return nil // Ready is all a system that cannot name its leader offers
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
		system := "chaos-node"
		if c.db != nil {
			system = c.db.Name()
		}
		_ = os.RemoveAll(filepath.Join(c.workDir, system))
	}
	if c.lock != nil {
		_ = c.lock.Close()
	}
}

// clients makes one client per worker, bound to nodes round robin.
func (c *cluster) clients(concurrency int) ([]workload.Client, error) {
	clients, err := workload.BindClients(concurrency, len(c.nodes), func(i int) (workload.Client, error) {
		return newClient(c.db, c.nodes[i], c.readConsistency)
	})
	c.made = append(c.made, clients...)
	return clients, err
}

// newClient makes a client of d's own protocol for node n, whose reads
// (the register's and the set's final one) follow reads, a read
// consistency of Options: etcd's serializable range, chaos-node's stale
// GET, a described system's {read_consistency}.
func newClient(d db.DB, n db.Node, reads string) (workload.Client, error) {
	if s, ok := described.From(d); ok {
		return workload.NewDescribedClient(s, n, reads)
	}
	weak := reads == ReadSerializable
	switch d.(type) {
	case *db.Etcd:
		return workload.NewEtcdClient(n.Name, d.ClientAddr(n), workload.EtcdOptions{Serializable: weak})
	case *db.ChaosNode:
		return workload.NewChaosNodeClient(n.Name, d.ClientAddr(n), workload.ChaosNodeOptions{StaleReads: weak})
	}
	return nil, fmt.Errorf("no client for %s", d.Name())
}

// leader asks the system who leads, when it can say.
func (c *cluster) leader(ctx context.Context) (string, error) {
	lf, ok := c.db.(db.LeaderFinder)
	if !ok {
		return "", fmt.Errorf("%s cannot say who leads", c.db.Name())
	}
	return lf.Leader(ctx, c.nodes)
}

// hookAddrs are the fault-hook addresses of the nodes that have them.
func (c *cluster) hookAddrs() map[string]string {
	return HookAddrs(c.db, c.nodes)
}

// HookAddrs are the fault-hook addresses of those of nodes that answer
// the hooks, by node name; empty for a system without them.
func HookAddrs(d db.DB, nodes []db.Node) map[string]string {
	out := map[string]string{}
	fh, ok := d.(db.FaultHooker)
	if !ok {
		return out
	}
	for _, n := range nodes {
		if addr, ok := fh.HookAddr(n); ok {
			out[n.Name] = addr
		}
	}
	return out
}
