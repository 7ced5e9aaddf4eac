package db

import (
	"context"
	"fmt"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"chaos/control"
	"chaos/node/nodeapi"
)

// ChaosNode deploys chaos-node: the `chaos` binary itself, run as
// `chaos node`.
type ChaosNode struct {
	// Binary is the local chaos binary to upload; empty means this process's
	// own executable.
	Binary string
	// Upload copies Binary to Layout.BinDir on each host. Local mode runs
	// Binary in place instead.
	Upload bool
	Layout Layout
	// Nodes are all members, for the --peers list.
	Nodes []Node
	// ClientPort and PeerPort default to 7000 and 7001.
	ClientPort, PeerPort int
	// Heartbeat and Election are the raft timings (defaults 50ms and 500ms).
	Heartbeat, Election time.Duration
	// Bugs are planted bugs passed as --bug.
	Bugs []string
	// FaultHooks starts nodes with --enable-fault-hooks.
	FaultHooks bool
	// Faketime starts nodes reading a fake clock's control file (see
	// FakeClocker).
	Faketime bool
	// Storage serves each node's data directory through the fault file
	// system (storage faults); nil: a plain directory.
	Storage *FaultFS
}

const chaosNodeName = "chaos-node"

func (c *ChaosNode) Name() string { return chaosNodeName }

func (c *ChaosNode) ports() (client, peer int) {
	client, peer = c.ClientPort, c.PeerPort
	if client == 0 {
		client = 7000
	}
	if peer == 0 {
		peer = 7001
	}
	return client, peer
}

func (c *ChaosNode) ClientAddr(n Node) string {
	client, _ := c.ports()
	return net.JoinHostPort(n.Addr, strconv.Itoa(client))
}

func (c *ChaosNode) peerAddr(n Node) string {
	_, peer := c.ports()
	return net.JoinHostPort(n.Addr, strconv.Itoa(peer))
}

// daemon is the process n runs as.
func (c *ChaosNode) daemon(n Node) Daemon {
	return Daemon{Dir: c.Layout.NodeDir(chaosNodeName, n), Name: "node", Procs: c.Layout.Procs}
}

// node is n's process control: Kill, Pause, Resume, Process and Stop are
// its (see NodeDaemon).
func (c *ChaosNode) node(n Node) NodeDaemon {
	return NodeDaemon{Node: n, Daemon: c.daemon(n), Mount: c.StorageMount(n)}
}

func (c *ChaosNode) localBinary() (string, error) {
	if c.Binary != "" {
		return c.Binary, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the chaos binary to deploy: %w (pass --binary)", err)
	}
	return exe, nil
}

// remoteBinary is the path of the binary on the host.
func (c *ChaosNode) remoteBinary() (string, error) {
	if !c.Upload {
		return c.localBinary()
	}
	return path.Join(c.Layout.BinDir, "chaos"), nil
}

func (c *ChaosNode) Install(ctx context.Context, r control.Remote, n Node) error {
	dirs := []string{c.Layout.NodeDir(chaosNodeName, n)}
	if c.Upload {
		dirs = append(dirs, c.Layout.BinDir)
	}
	for i, d := range dirs {
		dirs[i] = control.ShellQuote(d)
	}
	if err := Run(ctx, r, "mkdir -p "+strings.Join(dirs, " ")); err != nil {
		return wrap(n, "install", err)
	}
	if err := c.StorageMount(n).Install(ctx, r); err != nil {
		return err
	}
	if !c.Upload {
		return nil
	}
	local, err := c.localBinary()
	if err != nil {
		return err
	}
	remote, _ := c.remoteBinary()
	return wrap(n, "upload chaos", r.Upload(ctx, local, remote, 0o755))
}

// argv is the command line of node n.
func (c *ChaosNode) argv(n Node) ([]string, error) {
	bin, err := c.remoteBinary()
	if err != nil {
		return nil, err
	}
	peers := make([]string, len(c.Nodes))
	for i, p := range c.Nodes {
		peers[i] = p.Name + "=" + c.peerAddr(p)
	}
	t := c.timing()
	dir := c.Layout.NodeDir(chaosNodeName, n)
	argv := []string{bin, "node", "--id", n.Name, "--data-dir", path.Join(dir, "data"), "--log-dir", dir,
		"--client-addr", c.ClientAddr(n), "--peer-addr", c.peerAddr(n), "--peers", strings.Join(peers, ","),
		"--heartbeat-interval", t.Heartbeat.String(), "--election-timeout", t.ElectionTimeout.String()}
	for _, b := range c.Bugs {
		argv = append(argv, "--bug", b)
	}
	if c.FaultHooks {
		argv = append(argv, "--enable-fault-hooks")
	}
	return argv, nil
}

func (c *ChaosNode) Start(ctx context.Context, r control.Remote, n Node) error {
	argv, err := c.argv(n)
	if err != nil {
		return err
	}
	if err := c.StorageMount(n).Mount(ctx, r); err != nil {
		return err
	}
	d := c.daemon(n)
	d.Clock = StartClock(ctx, c.Faketime, c, r, n)
	return wrap(n, "start chaos-node", d.Start(ctx, r, argv))
}

func (c *ChaosNode) Ready(ctx context.Context, n Node) error {
	return wrap(n, "wait for chaos-node", waitHTTP(ctx, "http://"+c.ClientAddr(n)+nodeapi.Path(nodeapi.RouteStatus, ""), nil))
}

// Up asks n for its /status, which a node answers without a leader.
func (c *ChaosNode) Up(ctx context.Context, n Node) error {
	return wrap(n, "chaos-node up", probeOnce(ctx, "http://"+c.ClientAddr(n)+nodeapi.Path(nodeapi.RouteStatus, ""), nil))
}

// Kill, Pause, Resume, Process and Stop are n's process control's (see
// node).
func (c *ChaosNode) Kill(ctx context.Context, r control.Remote, n Node) error {
	return c.node(n).Kill(ctx, r)
}

func (c *ChaosNode) Pause(ctx context.Context, r control.Remote, n Node) error {
	return c.node(n).Pause(ctx, r)
}

func (c *ChaosNode) Resume(ctx context.Context, r control.Remote, n Node) error {
	return c.node(n).Resume(ctx, r)
}

func (c *ChaosNode) Process(ctx context.Context, r control.Remote, n Node) (Process, error) {
	return c.node(n).Process(ctx, r)
}

func (c *ChaosNode) Stop(ctx context.Context, r control.Remote, n Node) error {
	return c.node(n).Stop(ctx, r)
}

// Wipe removes n's data and its logs, so the next run's logs hold that run
// only (events.jsonl is appended to across restarts within a run), and the
// fault file system's backing directory (unmounted first).
func (c *ChaosNode) Wipe(ctx context.Context, r control.Remote, n Node) error {
	if err := wipeStorage(ctx, r, c.StorageMount(n)); err != nil {
		return err
	}
	dir := c.Layout.NodeDir(chaosNodeName, n)
	return wrap(n, "wipe", Run(ctx, r, "rm -rf "+quotePaths(dir, "data", "events.jsonl", "node.log")))
}

func (c *ChaosNode) CollectLogs(ctx context.Context, r control.Remote, n Node, dir string) error {
	nd := c.Layout.NodeDir(chaosNodeName, n)
	files := append([]string{path.Join(nd, "node.log"), path.Join(nd, "events.jsonl")}, c.StorageMount(n).Logs()...)
	return Collect(ctx, r, n, dir, files...)
}
