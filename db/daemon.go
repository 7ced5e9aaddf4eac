package db

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"chaos/control"
)

// daemon is a process started in the background on a host and tracked by a
// pidfile in its node directory, with its output in a log file there.
type daemon struct {
	dir  string // node directory
	name string // base name of the pidfile and log file
}

func (d daemon) pidfile() string { return path.Join(d.dir, d.name+".pid") }
func (d daemon) logfile() string { return path.Join(d.dir, d.name+".log") }

// alive is a shell condition true when the pidfile names a live process:
// one that exists and is not a zombie (a killed daemon stays a zombie until
// its new parent reaps it, and kill -0 still succeeds on it).
func (d daemon) alive() string {
	p := control.ShellQuote(d.pidfile())
	return fmt.Sprintf("{ [ -f %s ] && s=$(sed 's/.*) //' \"/proc/$(cat %s)/stat\" 2>/dev/null) && [ \"${s%%%% *}\" != Z ]; }", p, p)
}

// startCmd starts argv detached (its own session, stdin from /dev/null,
// output appended to the log) unless the pidfile names a live process.
func (d daemon) startCmd(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = control.ShellQuote(a)
	}
	dir, log, pid := control.ShellQuote(d.dir), control.ShellQuote(d.logfile()), control.ShellQuote(d.pidfile())
	return fmt.Sprintf("mkdir -p %s && cd %s && if %s; then echo \"already running as pid $(cat %s)\" >&2; exit %d; fi; "+
		"setsid %s >> %s 2>&1 < /dev/null & echo $! > %s",
		dir, dir, d.alive(), pid, exitAlreadyRunning, strings.Join(q, " "), log, pid)
}

// signalCmd sends sig to the daemon if it runs.
func (d daemon) signalCmd(sig string) string {
	return fmt.Sprintf("if %s; then kill -%s \"$(cat %s)\"; fi", d.alive(), sig, control.ShellQuote(d.pidfile()))
}

// stopCmd sends SIGTERM (and SIGCONT, in case it is paused), waits up to
// graceSeconds for the process to exit, then sends SIGKILL.
func (d daemon) stopCmd(graceSeconds int) string {
	pid := control.ShellQuote(d.pidfile())
	return fmt.Sprintf("if %s; then p=\"$(cat %s)\"; kill -TERM $p; kill -CONT $p; "+
		"i=0; while %s && [ $i -lt %d ]; do sleep 0.1; i=$((i+1)); done; "+
		"kill -KILL $p 2>/dev/null; fi; rm -f %s",
		d.alive(), pid, d.alive(), graceSeconds*10, pid)
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
	// a moment and report the end of its log if it is gone.
	check := fmt.Sprintf("sleep 0.2; if ! %s; then echo exited; tail -n 5 %s; fi", d.alive(), control.ShellQuote(d.logfile()))
	res, err = r.Run(ctx, check)
	if err != nil {
		return err
	}
	if out := strings.TrimSpace(string(res.Stdout)); strings.HasPrefix(out, "exited") {
		return fmt.Errorf("%s exited right after start; its log ends: %s", argv[0],
			strings.ReplaceAll(strings.TrimSpace(strings.TrimPrefix(out, "exited")), "\n", " | "))
	}
	return nil
}
