package testbed

import (
	"context"
	"time"
)

// System is everything the testbed does to the machine outside its own
// directory: run commands, start and signal processes, read /proc and /sys,
// make mount points, dial sshd. NewSystem returns the real one; the tests
// use a fake that records each call.
type System interface {
	// Run runs argv to completion and returns its standard output. A
	// non-zero exit is an error that carries argv and the standard error.
	Run(ctx context.Context, argv ...string) (string, error)
	// Start launches a long-running process as Launch describes and returns
	// without waiting for it.
	Start(l Launch) (Daemon, error)
	// LookPath finds an executable in PATH or the sbin directories and
	// returns its absolute path.
	LookPath(file string) (string, error)
	// ReadFile reads a file of the machine, such as /proc/<pid>/stat.
	ReadFile(path string) ([]byte, error)
	// Pids lists the processes of the machine's PID namespace.
	Pids() ([]int, error)
	// Kill sends SIGKILL to pid. A pid that no longer exists is not an error.
	Kill(pid int) error
	// Mkdir creates one directory with mode 0755; fs.ErrExist when it exists.
	Mkdir(path string) error
	// Remove removes an empty directory.
	Remove(path string) error
	// SSHBanner connects to addr over TCP and returns the first line the
	// server sends (an SSH server's identification, "SSH-2.0-..."), giving
	// up after timeout.
	SSHBanner(ctx context.Context, addr string, timeout time.Duration) (string, error)
}

// Launch describes a process that outlives the command that starts it.
type Launch struct {
	Argv []string
	// Dir is its working directory.
	Dir string
	// Namespaces the process starts in, new ones: any of "mount", "pid"
	// and "uts".
	Namespaces []string
	// Log is the file its standard output and error are appended to.
	Log string
}

// Daemon is a started process.
type Daemon struct {
	// Pid is its pid in the machine's PID namespace.
	Pid int
	// Exited is closed when the process has exited (and been reaped), if
	// that happens while the starting program still runs.
	Exited <-chan struct{}
}
