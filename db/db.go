// Package db holds the systems under test: how to install, start, kill,
// pause, resume, stop and wipe each of them on a host, and how to collect
// its logs, all through a control.Remote so the same code runs over SSH and
// locally. Implementations: chaos-node and etcd.
package db

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"chaos/control"
)

// Node is one member of the cluster under test.
type Node struct {
	// Name is the member's name (n1, n2, ...).
	Name string
	// Addr is the address the member binds to and peers reach it at: an IP
	// or a name every member and the controller resolve to that host.
	Addr string
}

// Layout says where a system keeps its files on every host.
type Layout struct {
	// BinDir receives uploaded binaries (default /opt/chaos).
	BinDir string
	// DataDir holds one directory per system and node (default /var/lib/chaos).
	DataDir string
	// Procs, when not 0, is the GOMAXPROCS of every node process: the
	// cores a Go program among them schedules its goroutines on. Nodes
	// that share one machine (local mode, the testbed) get their share of
	// its cores, as a container's CPU limit would give them, instead of
	// each scheduling on all of them; other programs ignore it.
	Procs int
}

// DefaultLayout is the layout on real hosts; the testbed makes both
// directories private to each host.
func DefaultLayout() Layout { return Layout{BinDir: "/opt/chaos", DataDir: "/var/lib/chaos"} }

// NodeDir is where system keeps node n's data, logs and pidfile.
func (l Layout) NodeDir(system string, n Node) string { return path.Join(l.DataDir, system, n.Name) }

// DB is one system under test. Every method acts on one node through its
// Remote and is safe to call for different nodes concurrently.
type DB interface {
	// Name is the system's name: "chaos-node" or "etcd".
	Name() string
	// Install puts the binaries in place on the host and creates n's directories.
	Install(ctx context.Context, r control.Remote, n Node) error
	// Start starts n as a daemon with a pidfile and a log file, and returns
	// once the process runs. Starting a node that runs already fails with
	// an error that wraps ErrAlreadyRunning.
	Start(ctx context.Context, r control.Remote, n Node) error
	// Ready waits until n answers its client API as a member of a working
	// cluster (for etcd: healthy, with a leader). It is for setup and the
	// recovery phase, never for a fault transition.
	Ready(ctx context.Context, n Node) error
	// Up checks once whether n's process answers on its client port,
	// whatever the state of the cluster: a node cut off from its peers, or
	// of a cluster without a leader, is up; a killed or paused one is not.
	// Fault transitions wait on this, never on Ready.
	Up(ctx context.Context, n Node) error
	// Kill sends SIGKILL; Pause SIGSTOP; Resume SIGCONT. A node that does not
	// run is no error for Kill and Resume.
	Kill(ctx context.Context, r control.Remote, n Node) error
	Pause(ctx context.Context, r control.Remote, n Node) error
	Resume(ctx context.Context, r control.Remote, n Node) error
	// Stop ends n gracefully (SIGTERM, then SIGKILL after a grace period).
	Stop(ctx context.Context, r control.Remote, n Node) error
	// Wipe removes n's data, so the next Start begins empty.
	Wipe(ctx context.Context, r control.Remote, n Node) error
	// CollectLogs copies n's log files into the local directory dir.
	CollectLogs(ctx context.Context, r control.Remote, n Node, dir string) error
	// ClientAddr is where clients reach n (host:port).
	ClientAddr(n Node) string
}

// Run runs cmd and turns a non-zero exit into an error carrying the first
// line of its stderr (callers name the node and the step).
func Run(ctx context.Context, r control.Remote, cmd string) error {
	res, err := r.Run(ctx, cmd)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		line, _, _ := strings.Cut(strings.TrimSpace(string(res.Stderr)), "\n")
		return fmt.Errorf("exited %d: %s", res.ExitCode, line)
	}
	return nil
}

// errAlreadyRunning is the exit code startCmd uses when the pidfile names a
// live process.
const exitAlreadyRunning = 3

// ErrAlreadyRunning is wrapped by the error of a Start whose node (or
// daemon) runs already: its pidfile names its live process.
var ErrAlreadyRunning = errors.New("already running")

// runningError is a Start's error when the daemon runs already: the line
// the start command printed ("already running as pid N").
type runningError struct{ line string }

func (e runningError) Error() string        { return e.line }
func (e runningError) Is(target error) bool { return target == ErrAlreadyRunning }

func wrap(n Node, what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %w", n.Name, what, err)
}

// quotePaths joins each name to dir and shell-quotes the results.
func quotePaths(dir string, names ...string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = control.ShellQuote(path.Join(dir, n))
	}
	return strings.Join(q, " ")
}
