package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"chaos/internal/secret"
)

// local is the Remote for this machine in local mode: commands run as the
// current user, files are copied on the local file system.
type local struct {
	host string
}

// NewLocal returns a Remote that runs commands on this machine with `sh -c`
// as the current user (no sudo). host names it in errors: in local mode, the
// node it stands for ("n3").
func NewLocal(host string) Remote {
	return &local{host: host}
}

func (l *local) Host() string { return l.host }

func (l *local) Close() error { return nil }

// Run runs cmd in a process group of its own, with this process's
// environment less its secrets (secret.Environ), so that when ctx ends the
// whole group is killed with SIGKILL: the shell and everything it started
// and did not move to another group.
func (l *local) Run(ctx context.Context, cmd string) (Result, error) {
	what := "`" + clip(firstLine(cmd), 80) + "`"
	return runGroup(ctx, l.host, what, []string{"sh", "-c", cmd}, secret.Environ(os.Environ()))
}

// runGroup runs argv on this machine with env in a process group of its
// own, killed whole with SIGKILL when ctx ends; errors name host and what.
func runGroup(ctx context.Context, host, what string, argv, env []string) (Result, error) {
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = env
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	// Bounds the wait for output pipes held open by processes that left the
	// group.
	c.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if ctxErr := ctx.Err(); ctxErr != nil && err != nil {
		return Result{}, fmt.Errorf("%s: %s: %w", host, what, ctxErr)
	}
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.ExitCode = exitCode(exit)
	default:
		return Result{}, fmt.Errorf("%s: run %s: %w", host, what, err)
	}
	return res, nil
}

// exitCode is the shell's exit status for a finished process: 128+N for
// signal N.
func exitCode(e *exec.ExitError) int {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return e.ExitCode()
}

func (l *local) Upload(ctx context.Context, src, dst string, mode os.FileMode) error {
	return l.copy(ctx, "upload", src, dst, mode)
}

func (l *local) Download(ctx context.Context, src, dst string) error {
	return l.copy(ctx, "download", src, dst, 0o644)
}

// copy streams src into dst atomically; errors name the host and verb.
func (l *local) copy(ctx context.Context, verb, src, dst string, mode os.FileMode) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", l.host, verb, err)
	}
	defer f.Close()
	if err := copyAtomic(ctx, f, dst, mode); err != nil {
		return transferError(l.host, verb+" "+src+" to "+dst, err)
	}
	return nil
}
