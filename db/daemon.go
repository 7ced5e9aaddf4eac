package db

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"chaos/control"
)

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
}

func (d daemon) pidfile() string {
	if d.ownPidfile != "" {
		return d.ownPidfile
	}
	return path.Join(d.dir, d.name+".pid")
}

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

// alive is a shell condition true when the pidfile names a live process:
// one that exists and is not a zombie (a killed daemon stays a zombie until
// its new parent reaps it, and kill -0 still succeeds on it).
func (d daemon) alive() string {
	p := control.ShellQuote(d.pidfile())
	return fmt.Sprintf("{ [ -f %s ] && s=$(sed 's/.*) //' \"/proc/$(cat %s)/stat\" 2>/dev/null) && [ \"${s%%%% *}\" != Z ]; }", p, p)
}

// startCmd starts argv detached (its own session, stdin from /dev/null,
// output appended to the log) unless the pidfile names a live process.
// With a pidfile of the system's own, a stale one is removed first and the
// system writes the new one.
func (d daemon) startCmd(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = control.ShellQuote(a)
	}
	dir, log, pid := control.ShellQuote(d.dir), control.ShellQuote(d.logfile()), control.ShellQuote(d.pidfile())
	setsid := "setsid"
	if d.procs > 0 {
		setsid = fmt.Sprintf("GOMAXPROCS=%d setsid", d.procs)
	}
	check := fmt.Sprintf("mkdir -p %s && cd %s && if %s; then echo \"already running as pid $(cat %s)\" >&2; exit %d; fi; ",
		dir, dir, d.alive(), pid, exitAlreadyRunning)
	if d.ownPidfile != "" {
		return check + fmt.Sprintf("rm -f %s; %s %s >> %s 2>&1 < /dev/null &", pid, setsid, strings.Join(q, " "), log)
	}
	return check + fmt.Sprintf("%s %s >> %s 2>&1 < /dev/null & echo $! > %s", setsid, strings.Join(q, " "), log, pid)
}

// signalCmd sends sig to the daemon if it runs.
func (d daemon) signalCmd(sig string) string {
	return fmt.Sprintf("if %s; then %s; fi", d.alive(), d.kill(sig, "\"$(cat "+control.ShellQuote(d.pidfile())+")\""))
}

// killCmd sends SIGKILL to the daemon if it runs, and waits (5 s at most)
// until it is gone, so that a Start right after finds no live process.
func (d daemon) killCmd() string {
	return fmt.Sprintf("%s; i=0; while %s && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done", d.signalCmd("KILL"), d.alive())
}

// stopCmd sends SIGTERM (and SIGCONT, in case it is paused), waits up to
// graceSeconds for the process to exit, then sends SIGKILL.
// For a group daemon it waits for the whole group: the shell that leads
// it may exit at once while the program it started shuts down.
func (d daemon) stopCmd(graceSeconds int) string {
	pid := control.ShellQuote(d.pidfile())
	running := d.alive()
	if d.group {
		running = fmt.Sprintf("{ %s || kill -0 -$p 2>/dev/null; }", running)
	}
	return fmt.Sprintf("if %s; then p=\"$(cat %s)\"; %s; %s; "+
		"i=0; while %s && [ $i -lt %d ]; do sleep 0.1; i=$((i+1)); done; "+
		"%s 2>/dev/null; fi; rm -f %s",
		d.alive(), pid, d.kill("TERM", "$p"), d.kill("CONT", "$p"), running, graceSeconds*10, d.kill("KILL", "$p"), pid)
}

func (d daemon) start(ctx context.Context, r control.Remote, argv []string) error {
	res, err := r.Run(ctx, d.startCmd(argv))
	if err != nil {
		return err
	}
	if res.ExitCode == exitAlreadyRunning {
		return errors.New(strings.TrimSpace(string(res.Stderr)))
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	// The process may die at once (a bad flag, a locked data dir): give it
	// a moment and report the end of its log if it is gone. A system that
	// writes its own pidfile gets until ownStartTimeout to write it.
	wait := "sleep 0.2"
	if d.ownPidfile != "" {
		wait = fmt.Sprintf("i=0; while ! %s && [ $i -lt %d ]; do sleep 0.1; i=$((i+1)); done", d.alive(), int(ownStartTimeout/(100*time.Millisecond)))
	}
	check := fmt.Sprintf("%s; if ! %s; then echo exited; tail -n 5 %s; fi", wait, d.alive(), control.ShellQuote(d.logfile()))
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
