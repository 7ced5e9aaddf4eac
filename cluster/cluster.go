// Package cluster is the system under test on its hosts: it reaches the
// hosts (locally, or over SSH), starts the nodes from empty data, makes
// the clients bound to them, asks who leads, and stops the nodes and pulls
// their logs. A chaos run (campaign) and a benchmark (bench) both drive a
// Cluster.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/faultfs"
	"chaos/history"
	"chaos/workload"
)

// Read consistencies of the clients' reads (Options.ReadConsistency).
const (
	ReadLinearizable = "linearizable"
	ReadSerializable = "serializable"
)

// ConfigError is why a cluster cannot be made from its Options (the
// system or the SSH configuration refuses them): a usage error, not a
// failure to reach the hosts. Its text is the refusal's.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Options say what cluster to make.
type Options struct {
	// Hosts are the nodes' hosts (name or address, optional :port); none
	// means local mode: LocalNodes nodes on this machine.
	Hosts []string
	// LocalNodes is local mode's count of nodes, 1 to 5 (default 5).
	LocalNodes int
	// SSH configures the connections to Hosts; Docker, to those that are
	// containers ("docker:NAME"; "docker:compose:PROJECT" stands for the
	// project's containers).
	SSH    control.SSHConfig
	Docker control.DockerConfig
	// NewDB makes the system under test for its configuration (db.New, or
	// a described system's constructor).
	NewDB func(db.Config) (db.DB, error)
	// Binary is the node binary to deploy ("" for the system's default).
	Binary string
	// Bugs are chaos-node's planted bugs to start the nodes with.
	Bugs []string
	// ReadConsistency is how the clients read: ReadLinearizable (or "")
	// or ReadSerializable.
	ReadConsistency string
	// StorageFaults serves every node's data directory through chaos's
	// fault file system (db.Config.Storage), from this executable.
	StorageFaults bool
	// StorageNames is the fault file system's names model ("" is
	// faultfs.NamesPOSIX).
	StorageNames faultfs.Names
	// ContainerNodes says every host is a container that is itself the
	// node, its main process the server (db.ContainerNodes): chaos
	// starts, kills and pauses the containers and installs nothing.
	ContainerNodes bool
}

// Cluster is the system under test on its hosts.
type Cluster struct {
	// Nodes are the nodes, n1, n2, ... (see Nodes).
	Nodes []db.Node
	// Remotes reach each node's host, by node name.
	Remotes map[string]control.Remote
	// DB is the system under test.
	DB db.DB
	// Local is true in local mode.
	Local bool
	// SharedClock is true when some host runs on this machine's kernel
	// (local mode, the testbed): its system clock is the controller's.
	SharedClock bool
	// Layout is where the system keeps its files on the hosts.
	Layout db.Layout

	readConsistency string
	workDir         string   // local mode: where the nodes keep their data
	lock            *os.File // local mode: held while this cluster owns the local nodes
	made            []workload.Client
}

// Connect reaches every host: locally, or in parallel over SSH or through
// the Docker Engine (containers). Every host that cannot be reached is
// named in the error; a system that refuses its configuration is a
// *ConfigError.
func Connect(ctx context.Context, o Options) (*Cluster, error) {
	hosts, err := control.ExpandCompose(ctx, o.Hosts, o.Docker)
	if err != nil {
		return nil, err
	}
	local := len(hosts) == 0
	if local {
		hosts = LocalAddrs(o.LocalNodes)
	}
	c := &Cluster{Remotes: map[string]control.Remote{}, Local: local, Nodes: Nodes(hosts),
		readConsistency: o.ReadConsistency}
	if local {
		for _, n := range c.Nodes {
			c.Remotes[n.Name] = control.NewLocal(n.Name)
		}
		if c.workDir, err = PrepareLocalDataDir(); err != nil {
			return nil, err
		}
		lock, err := lockLocalMode(c.workDir)
		if err != nil {
			return nil, err
		}
		c.lock = lock
	} else if err := c.dial(ctx, hosts, o.SSH, o.dockerConfig()); err != nil {
		return nil, err
	}
	c.SharedClock = c.Local || sharesClock(ctx, c.Remotes, localBootID())
	layout := db.DefaultLayout()
	if c.Local {
		layout = LocalLayout()
	}
	if c.SharedClock {
		// On this machine, the nodes share its cores (db.Layout.Procs).
		layout.Procs = max(1, runtime.NumCPU()/len(c.Nodes))
	}
	c.Layout = layout
	cfg := db.Config{Nodes: c.Nodes, Layout: layout, Binary: o.Binary, Upload: !c.Local, Bugs: o.Bugs}
	if o.StorageFaults {
		fs, err := db.NewFaultFS(layout, !c.Local)
		if err != nil {
			c.Close(false)
			return nil, err
		}
		fs.Names = o.StorageNames
		cfg.Storage = fs
	}
	d, err := o.NewDB(cfg)
	if err == nil && o.ContainerNodes {
		d, err = containerNodes(d, hosts, o.StorageFaults)
	}
	if err != nil {
		c.Close(false)
		return nil, &ConfigError{err}
	}
	c.DB = d
	if o.ContainerNodes {
		if err := c.startContainers(ctx); err != nil {
			c.Close(false)
			return nil, err
		}
	}
	return c, nil
}

// startContainers starts the containers that are the nodes and do not
// run: their network namespaces, which the fault probes enter, exist only
// while they run.
func (c *Cluster) startContainers(ctx context.Context) error {
	return c.Each(func(n db.Node, r control.Remote) error {
		if err := c.DB.Start(ctx, r, n); err != nil && !errors.Is(err, db.ErrAlreadyRunning) {
			return err
		}
		return nil
	})
}

// dial reaches every host, in parallel: containers through the Docker
// Engine, the others over SSH. A container's node is at its address.
func (c *Cluster) dial(ctx context.Context, hosts []string, ssh control.SSHConfig, docker control.DockerConfig) error {
	dialer, err := control.NewDialer(hosts, ssh, docker)
	if err != nil {
		return &ConfigError{err}
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() {
			r, err := dialer.Dial(ctx, h)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			c.Remotes[c.Nodes[i].Name] = r
			if a, ok := r.(control.Addressed); ok {
				if c.Nodes[i].Addr = a.Addr(); c.Nodes[i].Addr == "" {
					errs = append(errs, fmt.Errorf("%s: the container has no IP address: attach it to a network (`docker network connect`)", h))
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		c.Close(false)
		return errors.Join(errs...)
	}
	return nil
}

// Each runs f for every node in parallel and joins the errors.
func (c *Cluster) Each(f func(n db.Node, r control.Remote) error) error {
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, n := range c.Nodes {
		wg.Go(func() { errs[i] = f(n, c.Remotes[n.Name]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Setup starts every node from empty data and waits (30 s at most) until
// each is ready and, for a system that can say, a leader is elected.
func (c *Cluster) Setup(ctx context.Context) error {
	err := c.Each(func(n db.Node, r control.Remote) error {
		if err := c.DB.Stop(ctx, r, n); err != nil {
			return err
		}
		if err := c.DB.Wipe(ctx, r, n); err != nil {
			return err
		}
		if err := c.DB.Install(ctx, r, n); err != nil {
			return err
		}
		return c.DB.Start(ctx, r, n)
	})
	if err != nil {
		return err
	}
	ready, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Each(func(n db.Node, _ control.Remote) error { return c.DB.Ready(ready, n) }); err != nil {
		return err
	}
	if db.CapabilitiesOf(c.DB).Leader == nil {
		return nil // Ready is all a system that cannot name its leader offers
	}
	return c.WaitLeader(ready)
}

// WaitLeader polls until the nodes report a leader, or ctx ends.
func (c *Cluster) WaitLeader(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := c.Leader(ctx)
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

// Teardown stops every node unless asked to leave them running, and pulls
// every node's logs into dir/<node>/ either way ("" pulls none).
func (c *Cluster) Teardown(ctx context.Context, dir string, leaveRunning bool) error {
	return c.Each(func(n db.Node, r control.Remote) error {
		var errs []error
		if !leaveRunning {
			errs = append(errs, c.DB.Stop(ctx, r, n))
		}
		if dir != "" {
			errs = append(errs, c.DB.CollectLogs(ctx, r, n, filepath.Join(dir, n.Name)))
		}
		return errors.Join(errs...)
	})
}

// Close releases the connections and, in local mode, the nodes' data
// unless they were left running. A cluster whose system was never built
// (Connect failed before) ran no node, and removes nothing: the data
// under the local directory is another run's (one left running, for
// `chaos heal`).
func (c *Cluster) Close(leaveRunning bool) {
	for _, r := range c.Remotes {
		_ = r.Close()
	}
	if c.workDir != "" && !leaveRunning && c.DB != nil {
		_ = os.RemoveAll(filepath.Join(c.workDir, c.DB.Name()))
	}
	if c.lock != nil {
		_ = c.lock.Close()
	}
}

// Clients makes one client per worker, bound to the nodes round robin.
func (c *Cluster) Clients(concurrency int) ([]workload.Client, error) {
	clients, err := workload.BindClients(concurrency, len(c.Nodes), func(i int) (workload.Client, error) {
		return NewClient(c.DB, c.Nodes[i], c.readConsistency)
	})
	c.made = append(c.made, clients...)
	return clients, err
}

// Write writes value to key at node through a client of the system's own
// protocol made for this write and closed after it, and returns nil when
// the write certainly happened; the error says what the client saw
// otherwise. The write is in no history: the targeted faults use it to
// append entries at a node of their choosing (figure8).
func (c *Cluster) Write(ctx context.Context, node, key string, value int64) error {
	n, err := c.Node(node)
	if err != nil {
		return err
	}
	cl, err := NewClient(c.DB, n, ReadLinearizable)
	if err != nil {
		return err
	}
	defer cl.Close()
	out := cl.Do(ctx, workload.Op{F: history.FWrite, Key: key, Value: value})
	if out.Type != history.OK {
		return fmt.Errorf("%s: write %s: %s: %s", node, key, out.Type, out.Error)
	}
	return nil
}

// Made is every client Clients made.
func (c *Cluster) Made() []workload.Client { return c.made }

// Leader asks the system who leads, when it can say.
func (c *Cluster) Leader(ctx context.Context) (string, error) {
	lf := db.CapabilitiesOf(c.DB).Leader
	if lf == nil {
		return "", fmt.Errorf("%s cannot say who leads", c.DB.Name())
	}
	return lf.Leader(ctx, c.Nodes)
}

// Node is the node called name.
func (c *Cluster) Node(name string) (db.Node, error) {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return db.Node{}, fmt.Errorf("%q is not a node of the cluster", name)
}

// containerNodes is d with every node its host's container
// (db.ContainerNodes), refused when a host is not a container or storage
// faults are asked for (chaos places no data directory in a container it
// does not start).
func containerNodes(d db.DB, hosts []string, storageFaults bool) (db.DB, error) {
	for _, h := range hosts {
		if _, ok, _ := control.ContainerName(h); !ok {
			return nil, fmt.Errorf("--node-process container: %s is not a container (docker:NAME): every host must be one", h)
		}
	}
	if storageFaults {
		return nil, fmt.Errorf("--node-process container: storage faults need chaos to start the node on its fault file system; use --node-process chaos")
	}
	return db.ContainerNodes(d), nil
}

// dockerConfig is how containers are reached: a container that is the node
// may be stopped (Setup starts it).
func (o Options) dockerConfig() control.DockerConfig {
	cfg := o.Docker
	cfg.Stopped = cfg.Stopped || o.ContainerNodes
	return cfg
}
