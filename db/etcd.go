package db

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path"
	"strconv"
	"strings"

	"chaos/control"
)

// Etcd deploys etcd members from an etcd binary on the hosts (Debian's
// etcd-server package puts it at /usr/bin/etcd) or an uploaded one.
type Etcd struct {
	// Binary is a local etcd binary to upload; empty means `etcd` on the
	// hosts' PATH.
	Binary string
	Layout Layout
	// Nodes are all members, for --initial-cluster.
	Nodes []Node
	// ClientPort and PeerPort default to 2379 and 2380.
	ClientPort, PeerPort int
	// Faketime starts members under a fake clock where the etcd binary
	// allows it (see FakeClocker; a Go program never does).
	Faketime bool
	// Storage serves each member's data directory through the fault file
	// system (storage faults); nil: a plain directory.
	Storage *FaultFS

	fakeClocks FakeClocks
	reach      ReachCache
	ids        etcdIDs // member ids learned by States
}

const etcdName = "etcd"

func (e *Etcd) Name() string { return etcdName }

func (e *Etcd) ports() (client, peer int) {
	client, peer = e.ClientPort, e.PeerPort
	if client == 0 {
		client = 2379
	}
	if peer == 0 {
		peer = 2380
	}
	return client, peer
}

func (e *Etcd) ClientAddr(n Node) string {
	client, _ := e.ports()
	return net.JoinHostPort(n.Addr, strconv.Itoa(client))
}

func (e *Etcd) peerURL(n Node) string {
	_, peer := e.ports()
	return "http://" + net.JoinHostPort(n.Addr, strconv.Itoa(peer))
}

// daemon is the process n runs as.
func (e *Etcd) daemon(n Node) Daemon {
	return Daemon{Dir: e.Layout.NodeDir(etcdName, n), Name: "etcd", Procs: e.Layout.Procs}
}

// node is n's process control: Kill, Pause, Resume, Process and Stop are
// its (see NodeDaemon).
func (e *Etcd) node(n Node) NodeDaemon {
	return NodeDaemon{Node: n, Daemon: e.daemon(n), Mount: e.StorageMount(n)}
}

func (e *Etcd) remoteBinary() string {
	if e.Binary == "" {
		return "etcd"
	}
	return path.Join(e.Layout.BinDir, "etcd")
}

// StorageMount is n's --data-dir, served through the fault file system
// when Storage is set.
func (e *Etcd) StorageMount(n Node) StorageMount {
	dir := e.Layout.NodeDir(etcdName, n)
	return NewStorageMount(n, dir, path.Join(dir, "data"), e.Storage)
}

func (e *Etcd) Install(ctx context.Context, r control.Remote, n Node) error {
	if err := Run(ctx, r, "mkdir -p "+control.ShellQuote(e.Layout.NodeDir(etcdName, n))); err != nil {
		return wrap(n, "install", err)
	}
	if err := e.StorageMount(n).Install(ctx, r); err != nil {
		return err
	}
	if e.Binary != "" {
		if err := Run(ctx, r, "mkdir -p "+control.ShellQuote(e.Layout.BinDir)); err != nil {
			return wrap(n, "install", err)
		}
		return wrap(n, "upload etcd", r.Upload(ctx, e.Binary, e.remoteBinary(), 0o755))
	}
	res, err := r.Run(ctx, "command -v etcd")
	if err != nil {
		return wrap(n, "install", err)
	}
	if res.ExitCode != 0 {
		return wrap(n, "install", errNoEtcd)
	}
	return nil
}

// errNoEtcd says how to get etcd onto a host.
var errNoEtcd = errors.New("no etcd binary on the host; install Debian's etcd-server package (apt-get install -y etcd-server) or pass --binary")

// argv is n's etcd command line. It logs through zap (etcd 3.5's only
// logger, 3.4's newer one) as JSON lines to stderr, which is etcd.log:
// zap's lines name what etcd saw (e.g. "prober found high clock drift"
// with the drift) where capnslog, 3.4's default, printed prose.
func (e *Etcd) argv(n Node) []string {
	cluster := make([]string, len(e.Nodes))
	for i, m := range e.Nodes {
		cluster[i] = m.Name + "=" + e.peerURL(m)
	}
	client := "http://" + e.ClientAddr(n)
	return []string{e.remoteBinary(), "--name", n.Name, "--data-dir", path.Join(e.Layout.NodeDir(etcdName, n), "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", e.peerURL(n), "--initial-advertise-peer-urls", e.peerURL(n),
		"--initial-cluster", strings.Join(cluster, ","), "--initial-cluster-state", "new",
		"--initial-cluster-token", "chaos", "--logger", "zap", "--log-outputs", "stderr"}
}

func (e *Etcd) Start(ctx context.Context, r control.Remote, n Node) error {
	if err := e.StorageMount(n).Mount(ctx, r); err != nil {
		return err
	}
	d := e.daemon(n)
	d.Clock = StartClock(ctx, e.Faketime, e, r, n)
	return wrap(n, "start etcd", d.Start(ctx, r, e.argv(n)))
}

// Ready waits until the member reports itself healthy (it has a leader).
func (e *Etcd) Ready(ctx context.Context, n Node) error {
	healthy := func(b []byte) bool { return bytes.Contains(b, []byte(`"health":"true"`)) }
	return wrap(n, "wait for etcd", waitHTTP(ctx, "http://"+e.ClientAddr(n)+"/health", healthy))
}

// Up asks n for its /version, which a member answers without a leader.
func (e *Etcd) Up(ctx context.Context, n Node) error {
	return wrap(n, "etcd up", probeOnce(ctx, "http://"+e.ClientAddr(n)+"/version", nil))
}

// Kill, Pause, Resume, Process and Stop are n's process control's (see
// node).
func (e *Etcd) Kill(ctx context.Context, r control.Remote, n Node) error {
	return e.node(n).Kill(ctx, r)
}

func (e *Etcd) Pause(ctx context.Context, r control.Remote, n Node) error {
	return e.node(n).Pause(ctx, r)
}

func (e *Etcd) Resume(ctx context.Context, r control.Remote, n Node) error {
	return e.node(n).Resume(ctx, r)
}

func (e *Etcd) Process(ctx context.Context, r control.Remote, n Node) (Process, error) {
	return e.node(n).Process(ctx, r)
}

func (e *Etcd) Stop(ctx context.Context, r control.Remote, n Node) error {
	return e.node(n).Stop(ctx, r)
}

// Wipe removes n's data and its log (and the fault file system's backing
// directory, unmounted first).
func (e *Etcd) Wipe(ctx context.Context, r control.Remote, n Node) error {
	if err := wipeStorage(ctx, r, e.StorageMount(n)); err != nil {
		return err
	}
	dir := e.Layout.NodeDir(etcdName, n)
	return wrap(n, "wipe", Run(ctx, r, "rm -rf "+quotePaths(dir, "data", "etcd.log")))
}

func (e *Etcd) CollectLogs(ctx context.Context, r control.Remote, n Node, dir string) error {
	return Collect(ctx, r, n, dir, append([]string{e.daemon(n).LogFile()}, e.StorageMount(n).Logs()...)...)
}
