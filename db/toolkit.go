package db

import (
	"context"

	"chaos/control"
)

// What systems defined outside this package (db/described) build on: the
// same daemon, commands and log collection chaos-node and etcd use.

// Daemon is a process a system runs as on a host, started in the
// background and tracked by a pidfile, with its output in a log file.
type Daemon struct {
	// Dir is the node's directory: it holds Name.log and, unless Pidfile
	// is set, Name.pid.
	Dir, Name string
	// Pidfile, when set, is the system's own pidfile: the started command
	// writes it (it may daemonize), and Start waits until it names a live
	// process.
	Pidfile string
	// Group signals the daemon's process group rather than its pid alone,
	// so that a command started through a shell takes its children along.
	Group bool
	// Procs, when not 0, is the process's GOMAXPROCS (Layout.Procs).
	Procs int
	// Clock, when set, is the fake clock the process starts under (see
	// FakeClocker).
	Clock *FakeClock
}

func (d Daemon) daemon() daemon {
	return daemon{dir: d.Dir, name: d.Name, ownPidfile: d.Pidfile, group: d.Group, procs: d.Procs, clock: d.Clock}
}

// LogFile is where the daemon's output goes.
func (d Daemon) LogFile() string { return d.daemon().logfile() }

// Start starts argv detached unless the daemon runs already, and returns
// once its process runs (see DB.Start).
func (d Daemon) Start(ctx context.Context, r control.Remote, argv []string) error {
	return d.daemon().start(ctx, r, argv)
}

// Kill sends SIGKILL to the daemon if it runs, and waits (5 s at most)
// until it is gone, so that a Start right after finds no live process.
func (d Daemon) Kill(ctx context.Context, r control.Remote) error {
	return d.daemon().kill9(ctx, r)
}

// Signal sends sig ("KILL", "STOP", "CONT") to the daemon if it runs.
func (d Daemon) Signal(ctx context.Context, r control.Remote, sig string) error {
	return d.daemon().signal(ctx, r, sig)
}

// Process reports the daemon's process (see ProcessFinder).
func (d Daemon) Process(ctx context.Context, r control.Remote) (Process, error) {
	return d.daemon().process(ctx, r)
}

// Stop ends the daemon as DB.Stop does: SIGTERM, and SIGKILL after a grace
// period of five seconds.
func (d Daemon) Stop(ctx context.Context, r control.Remote) error {
	return d.daemon().stop(ctx, r, 5)
}

// Run runs cmd on r; a non-zero exit is an error carrying the first line
// of its stderr.
func Run(ctx context.Context, r control.Remote, cmd string) error { return run(ctx, r, cmd) }

// Collect downloads each of the remote files that exists into the local
// directory dir (see DB.CollectLogs).
func Collect(ctx context.Context, r control.Remote, n Node, dir string, files ...string) error {
	return collect(ctx, r, n, dir, files...)
}

// NodeDir is where system keeps node n's files under l.DataDir.
func (l Layout) NodeDir(system string, n Node) string { return l.nodeDir(system, n) }
