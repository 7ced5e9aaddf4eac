package db

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"chaos/control"
	"chaos/internal/fakeclock"
)

// Daemon is a process a system runs on a host, started in the background
// and tracked by a pidfile, with its output in a log file. It is chaos's
// one process control: every system's nodes, built in or described (see
// NodeDaemon), the fault file system's server (StorageMount) and the
// fault proxy run as one, and are started, killed, paused, resumed, found
// and stopped through it alone. No process is signalled unless it is the
// one Start started (see daemon.funcs).
type Daemon struct {
	// Dir is the node's directory: it holds Name.log, Name.started and,
	// unless Pidfile is set, Name.pid.
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
	// Private makes Start create a missing Dir mode 0700 (mkdir -m 0700),
	// for a daemon that keeps there what only its user may reach (a
	// control socket); a Dir already there keeps its mode, which the
	// daemon itself must check.
	Private bool
}

// daemon is d as the commands below build on it.
func (d Daemon) daemon() daemon {
	return daemon{dir: d.Dir, name: d.Name, ownPidfile: d.Pidfile, group: d.Group, procs: d.Procs, clock: d.Clock, private: d.Private}
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
func (d Daemon) Kill(ctx context.Context, r control.Remote) error { return d.daemon().kill9(ctx, r) }

// Pause sends SIGSTOP to the daemon if it runs.
func (d Daemon) Pause(ctx context.Context, r control.Remote) error {
	return d.daemon().signal(ctx, r, "STOP")
}

// Resume sends SIGCONT to the daemon if it runs.
func (d Daemon) Resume(ctx context.Context, r control.Remote) error {
	return d.daemon().signal(ctx, r, "CONT")
}

// Process reports the daemon's process (see ProcessFinder).
func (d Daemon) Process(ctx context.Context, r control.Remote) (Process, error) {
	return d.daemon().process(ctx, r)
}

// Stop ends the daemon as DB.Stop does: SIGTERM, and SIGKILL after a grace
// period of five seconds.
func (d Daemon) Stop(ctx context.Context, r control.Remote) error { return d.daemon().stop(ctx, r, 5) }

// NodeDaemon is node Node of a system, run as Daemon on the data
// directory Mount. Every system's Kill, Pause, Resume and Stop (DB) and
// Process (ProcessFinder) are its node's NodeDaemon's: a system says
// which daemon runs a node, nothing more. Errors name the node and the
// step ("n1: kill: ...").
type NodeDaemon struct {
	Node   Node
	Daemon Daemon
	// Mount is the node's data directory, unmounted by Stop once the
	// process is gone when it is served through the fault file system.
	Mount StorageMount
}

// Kill is DB.Kill: SIGKILL, and a wait until the process is gone.
func (p NodeDaemon) Kill(ctx context.Context, r control.Remote) error {
	return wrap(p.Node, "kill", p.Daemon.Kill(ctx, r))
}

// Pause is DB.Pause: SIGSTOP.
func (p NodeDaemon) Pause(ctx context.Context, r control.Remote) error {
	return wrap(p.Node, "pause", p.Daemon.Pause(ctx, r))
}

// Resume is DB.Resume: SIGCONT.
func (p NodeDaemon) Resume(ctx context.Context, r control.Remote) error {
	return wrap(p.Node, "resume", p.Daemon.Resume(ctx, r))
}

// Process is ProcessFinder.Process: the node's process, if it runs.
func (p NodeDaemon) Process(ctx context.Context, r control.Remote) (Process, error) {
	proc, err := p.Daemon.Process(ctx, r)
	return proc, wrap(p.Node, "process", err)
}

// Stop is DB.Stop: the node's process, then the fault file system under
// its data directory.
func (p NodeDaemon) Stop(ctx context.Context, r control.Remote) error {
	if err := p.Daemon.Stop(ctx, r); err != nil {
		return wrap(p.Node, "stop", err)
	}
	return unmountStorage(ctx, r, p.Mount)
}

// daemon is a process started in the background on a host and tracked by a
// pidfile in its node directory, with its output in a log file there.
type daemon struct {
	dir  string // node directory
	name string // base name of the pidfile and log file
	// ownPidfile, when set, is the pidfile the system writes itself (it
	// may daemonize): chaos writes none, and start waits for this one.
	ownPidfile string
	// group signals the daemon's whole process group, falling back to the
	// pid alone when the pid leads no group: a daemon started through a
	// shell (sh -c) takes the shell's children along.
	group bool
	// procs, when not 0, is the daemon's GOMAXPROCS (Layout.Procs).
	procs int
	// clock, when set, is the fake clock the daemon starts under: its
	// control file is readied before the start, and its environment set
	// for the started process.
	clock *FakeClock
	// private makes start create a missing dir mode 0700 (see
	// Daemon.Private).
	private bool
}

func (d daemon) pidfile() string {
	if d.ownPidfile != "" {
		return d.ownPidfile
	}
	return path.Join(d.dir, d.name+".pid")
}

// record is where start writes "PID STARTTIME" of the process it started:
// the pid and the start time (field 22 of /proc/PID/stat, in clock ticks
// since boot), which together name one process for as long as the machine
// runs. It is in the node directory, chaos's own, even when the system
// writes its pidfile elsewhere.
func (d daemon) record() string { return path.Join(d.dir, d.name+".started") }

func (d daemon) logfile() string { return path.Join(d.dir, d.name+".log") }

// ownStartTimeout bounds start's wait for a system's own pidfile.
const ownStartTimeout = 10 * time.Second

// kill is the command sending sig to the process pid (a shell word), or
// to its group (see daemon.group).
func (d daemon) kill(sig, pid string) string {
	if !d.group {
		return fmt.Sprintf("kill -%s %s", sig, pid)
	}
	return fmt.Sprintf("{ kill -%s -%s 2>/dev/null || kill -%s %s; }", sig, pid, sig, pid)
}

// funcs defines the shell functions every daemon command uses. A pidfile
// is a file someone else may have written (a system's own pidfile can be
// anywhere; a leftover of another run; a file planted to make root signal
// every process with kill -KILL -1), so no pid is signalled unless it is
// the process chaos started:
//
//   - chaos_live sets p to the pidfile's pid and t to that process's start
//     time, and succeeds, when the pidfile is a regular file (not a link)
//     holding a decimal pid above 1 (at most 9 digits, no leading zero)
//     and that process lives: it exists and is not a zombie (a killed
//     daemon stays a zombie until its new parent reaps it, and kill -0
//     still succeeds on it). It fails with 1 when there is no pidfile or
//     its process is gone, and with 2, saying why on stderr, when the
//     pidfile holds anything else ("", "0", "1", "-1", text): such a
//     pidfile is refused by every command that signals, and replaced by
//     start.
//   - chaos_ours is chaos_live whose process is the one start recorded
//     (record): the same pid and start time. A pid that was reused by an
//     unrelated process, or a pidfile naming a process chaos did not
//     start, fails with 1: to chaos the daemon does not run.
//   - chaos_started prints the start time of process $1.
func (d daemon) funcs() string {
	pid, rec := control.ShellQuote(d.pidfile()), control.ShellQuote(d.record())
	refused := control.ShellQuote(fmt.Sprintf("pidfile %s does not hold a process id above 1: refused, nothing signalled; remove it if no process of this node runs", d.pidfile()))
	return fmt.Sprintf("chaos_started() { s=$(sed 's/.*) //' \"/proc/$1/stat\" 2>/dev/null) || return 1; set -- $s; [ \"$1\" != Z ] && echo \"${20}\"; }; "+
		"chaos_live() { p=; [ -f %s ] && [ ! -L %s ] || return 1; p=$(head -c 32 %s); "+
		"case $p in ''|0*|1|*[!0-9]*|??????????*) echo %s >&2; return 2;; esac; t=$(chaos_started \"$p\"); }; "+
		"chaos_ours() { chaos_live && [ -f %s ] && [ \"$(head -c 64 %s)\" = \"$p $t\" ]; }; ",
		pid, pid, pid, refused, rec, rec)
}

// exitPidfileRefused is the exit code of a daemon command that found a
// pidfile chaos_live refuses (see funcs).
const exitPidfileRefused = 97

// startCmd starts argv detached (its own session, stdin from /dev/null,
// output appended to the log) unless the pidfile names the live process
// chaos started. Without a pidfile of the system's own, it writes the
// pidfile and the record. With one, a stale pidfile and record are removed
// first, the system writes the pidfile, and start writes the record once
// the pidfile names a live process.
func (d daemon) startCmd(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = control.ShellQuote(a)
	}
	dir, log, pid, rec := control.ShellQuote(d.dir), control.ShellQuote(d.logfile()), control.ShellQuote(d.pidfile()), control.ShellQuote(d.record())
	setsid := "setsid"
	if d.procs > 0 {
		setsid = fmt.Sprintf("GOMAXPROCS=%d setsid", d.procs)
	}
	mkdir := "mkdir -p"
	if d.private {
		mkdir = "mkdir -p -m 0700"
	}
	check := fmt.Sprintf("%s%s %s && cd %s && if chaos_ours 2>/dev/null; then echo \"already running as pid $p\" >&2; exit %d; fi; ",
		d.funcs(), mkdir, dir, dir, exitAlreadyRunning)
	after := "" // run once the daemon's first process is started, its pid in $!
	if c := d.clock; c != nil {
		check += fmt.Sprintf("( %s ) || exit 1; ", fakeClockPrepare(c.File, c.Mechanism))
		for _, kv := range fakeClockEnv(c.File, c.Mechanism, c.Lib) {
			name, value, _ := strings.Cut(kv, "=")
			setsid = name + "=" + control.ShellQuote(value) + " " + setsid
		}
		if c.Mechanism == fakeclock.Libfaketime {
			check += fmt.Sprintf("( %s ) || exit 1; ", libfaketimeShmCleanup(c.File))
			after = fmt.Sprintf(" echo $! >> %s;", control.ShellQuote(libfaketimeShmList(c.File)))
		}
	}
	if d.ownPidfile != "" {
		return check + fmt.Sprintf("rm -f %s %s; %s %s >> %s 2>&1 < /dev/null &%s", pid, rec, setsid, strings.Join(q, " "), log, after)
	}
	return check + fmt.Sprintf("rm -f %s; %s %s >> %s 2>&1 < /dev/null &%s p=$!; echo $p > %s && echo \"$p $(chaos_started $p)\" > %s",
		rec, setsid, strings.Join(q, " "), log, after, pid, rec)
}

// ifOurs runs then when the daemon's pidfile names the process chaos
// started (with its pid in $p), else when the pidfile is refused exits
// exitPidfileRefused, else (no daemon runs) runs otherwise.
func (d daemon) ifOurs(then, otherwise string) string {
	return fmt.Sprintf("%sif chaos_ours; then %s; elif [ $? = 2 ]; then exit %d; else %s; fi", d.funcs(), then, exitPidfileRefused, otherwise)
}

// signalCmd sends sig to the daemon if it runs.
func (d daemon) signalCmd(sig string) string {
	return d.ifOurs(d.kill(sig, "$p"), ":")
}

// killCmd sends SIGKILL to the daemon if it runs, and waits (5 s at most)
// until it is gone, so that a Start right after finds no live process.
func (d daemon) killCmd() string {
	return d.ifOurs(fmt.Sprintf("%s; i=0; while chaos_ours && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done", d.kill("KILL", "$p")), ":")
}

// stopCmd sends SIGTERM (and SIGCONT, in case it is paused), waits up to
// graceSeconds for the process to exit, then sends SIGKILL, and removes
// the pidfile and the record; a pidfile naming no process chaos started is
// removed too, a refused one is left.
// For a group daemon it waits for the whole group: the shell that leads
// it may exit at once while the program it started shuts down (a pid is
// not reused while a group of that id lives).
func (d daemon) stopCmd(graceSeconds int) string {
	files := control.ShellQuote(d.pidfile()) + " " + control.ShellQuote(d.record())
	running := "chaos_ours"
	if d.group {
		running = "{ chaos_ours || kill -0 -$q 2>/dev/null; }"
	}
	return d.ifOurs(fmt.Sprintf("q=$p; %s; %s; i=0; while %s && [ $i -lt %d ]; do sleep 0.1; i=$((i+1)); done; %s 2>/dev/null; rm -f %s",
		d.kill("TERM", "$q"), d.kill("CONT", "$q"), running, graceSeconds*10, d.kill("KILL", "$q"), files), "rm -f "+files)
}

// signal sends sig to the daemon if it runs (signalCmd).
func (d daemon) signal(ctx context.Context, r control.Remote, sig string) error {
	return d.run(ctx, r, d.signalCmd(sig))
}

// kill9 kills the daemon if it runs and waits until it is gone (killCmd).
func (d daemon) kill9(ctx context.Context, r control.Remote) error {
	return d.run(ctx, r, d.killCmd())
}

// stop stops the daemon if it runs (stopCmd).
func (d daemon) stop(ctx context.Context, r control.Remote, graceSeconds int) error {
	return d.run(ctx, r, d.stopCmd(graceSeconds))
}

// run runs one of the daemon's commands (see output).
func (d daemon) run(ctx context.Context, r control.Remote, cmd string) error {
	_, err := d.output(ctx, r, cmd)
	return err
}

// output runs one of the daemon's commands and returns its stdout: a
// refused pidfile is an error of its one-line reason, any other failure
// says the exit code and the first line of stderr.
func (d daemon) output(ctx context.Context, r control.Remote, cmd string) ([]byte, error) {
	res, err := r.Run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(res.Stderr)), "\n")
	switch res.ExitCode {
	case 0:
		return res.Stdout, nil
	case exitPidfileRefused:
		return nil, errors.New(line)
	}
	return nil, fmt.Errorf("exited %d: %s", res.ExitCode, line)
}

func (d daemon) start(ctx context.Context, r control.Remote, argv []string) error {
	res, err := r.Run(ctx, d.startCmd(argv))
	if err != nil {
		return err
	}
	if res.ExitCode == exitAlreadyRunning {
		return runningError{strings.TrimSpace(string(res.Stderr))}
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	// The process may die at once (a bad flag, a locked data dir): give it
	// a moment and report the end of its log if it is gone. A system that
	// writes its own pidfile gets until ownStartTimeout to write it.
	check := fmt.Sprintf("sleep 0.2; %sif ! chaos_ours; then echo exited; tail -n 5 %s; fi", d.funcs(), control.ShellQuote(d.logfile()))
	if d.ownPidfile != "" {
		check = fmt.Sprintf("%si=0; while ! chaos_live 2>/dev/null && [ $i -lt %d ]; do sleep 0.1; i=$((i+1)); done; "+
			"if chaos_live; then echo \"$p $t\" > %s; else echo exited; tail -n 5 %s; fi",
			d.funcs(), int(ownStartTimeout/(100*time.Millisecond)), control.ShellQuote(d.record()), control.ShellQuote(d.logfile()))
	}
	res, err = r.Run(ctx, check)
	if err != nil {
		return err
	}
	if out := strings.TrimSpace(string(res.Stdout)); strings.HasPrefix(out, "exited") {
		tail := strings.ReplaceAll(strings.TrimSpace(strings.TrimPrefix(out, "exited")), "\n", " | ")
		if d.ownPidfile != "" {
			return fmt.Errorf("%s names no running process %v after start; its log ends: %s", d.ownPidfile, ownStartTimeout, tail)
		}
		return fmt.Errorf("%s exited right after start; its log ends: %s", argv[0], tail)
	}
	return nil
}
