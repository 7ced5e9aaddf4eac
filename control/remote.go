package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Remote runs commands on one host and copies files to and from it. Its
// methods are safe for concurrent use. Each returns by the time its ctx is
// done, give or take the round trip that kills what it left running, with
// an error wrapping ctx.Err(). A cancelled command is killed with its
// process group: the shell and whatever it started, except processes that
// left the group on purpose (daemons, setsid).
type Remote interface {
	// Host is the name errors and logs use for the host, such as "n3".
	Host() string

	// Run runs cmd with `sh -c`, as root (through sudo when the login user
	// is not root; the local Remote runs it as the current user). A command
	// that exits non-zero is no error: err is nil and Result.ExitCode says
	// how it ended. err is non-nil only when the command could not be run to
	// its end: setup or transport failures, or ctx. When err wraps
	// ErrConnectionLost, the command was sent and may have run.
	// Stdout and stderr are held in memory (over SSH, stderr's first 64 KiB
	// only): use Run for small outputs and Download for files.
	Run(ctx context.Context, cmd string) (Result, error)

	// Upload copies the local file to the remote path with the given
	// permission bits, streaming it. The remote file appears atomically: it
	// is written to remote+".tmp" and renamed, so readers see the old file
	// or the whole new one.
	Upload(ctx context.Context, local, remote string, mode os.FileMode) error

	// Download copies the remote file to the local path (mode 0644),
	// streaming it, and atomically in the same way as Upload.
	Download(ctx context.Context, remote, local string) error

	// Close releases the connection. Calls after Close fail.
	Close() error
}

// ErrConnectionLost is wrapped by errors of commands that were sent to the
// host but whose outcome is unknown because the connection dropped: the
// command may have run, partly or fully, or not at all. Such commands are
// never retried by this package.
var ErrConnectionLost = errors.New("connection lost after the command was sent; it may have run")

// Result is how a command that ran to its end ended.
type Result struct {
	// ExitCode is the exit status; 128+N when signal N killed the command,
	// as shells report it.
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// Err is nil when the command exited 0 and an *ExitError otherwise. host and
// cmd are only used in the message.
func (r Result) Err(host, cmd string) error {
	if r.ExitCode == 0 {
		return nil
	}
	return &ExitError{Host: host, Cmd: cmd, ExitCode: r.ExitCode, Stderr: r.Stderr}
}

// ExitError is a command that ran and exited non-zero.
type ExitError struct {
	Host     string
	Cmd      string
	ExitCode int
	Stderr   []byte
}

// Error reads "n3: `cmd` exited 2: <first line of stderr>", on one line.
func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s: `%s` exited %d", e.Host, clip(firstLine(e.Cmd), 80), e.ExitCode)
	if line := firstLine(string(e.Stderr)); line != "" {
		msg += ": " + clip(line, 240)
	}
	return msg
}

// Output runs cmd on r and returns its stdout; a non-zero exit is an
// *ExitError (the stdout is returned with it).
func Output(ctx context.Context, r Remote, cmd string) ([]byte, error) {
	res, err := r.Run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return res.Stdout, res.Err(r.Host(), cmd)
}

// firstLine is the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// signalExitCode is the shell's exit status for a command killed by the
// named signal (RFC 4254 names, without "SIG"); 255, as ssh(1) reports, for
// a name it does not know.
func signalExitCode(name string) int {
	sigs := map[string]syscall.Signal{
		"ABRT": syscall.SIGABRT, "ALRM": syscall.SIGALRM, "FPE": syscall.SIGFPE,
		"HUP": syscall.SIGHUP, "ILL": syscall.SIGILL, "INT": syscall.SIGINT,
		"KILL": syscall.SIGKILL, "PIPE": syscall.SIGPIPE, "QUIT": syscall.SIGQUIT,
		"SEGV": syscall.SIGSEGV, "TERM": syscall.SIGTERM, "USR1": syscall.SIGUSR1,
		"USR2": syscall.SIGUSR2,
	}
	if sig, ok := sigs[name]; ok {
		return 128 + int(sig)
	}
	return 255
}
