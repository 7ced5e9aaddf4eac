package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/ssh"
)

// command is one command line for a session.
type command struct {
	what   string    // how errors name it: "`cmd`", "upload a to b"
	line   string    // what the remote login shell runs
	stdin  io.Reader // nil for none
	stdout io.Writer // nil: collected into Result.Stdout
}

// stderrMax bounds the stderr kept of one command; the rest is dropped.
const stderrMax = 64 << 10

// exec runs c on a new session and waits for it. Once the command line has
// been sent, nothing is retried: a lost connection is ErrConnectionLost. When
// ctx ends, the session is closed and the command's process group killed.
func (r *sshRemote) exec(ctx context.Context, c command) (Result, error) {
	s, release, err := r.session(ctx)
	if err != nil {
		return Result{}, err
	}
	defer release()
	var stdout bytes.Buffer
	out := &abortingWriter{w: &stdout, abort: func() { s.Close() }}
	if c.stdout != nil {
		out.w = c.stdout
	}
	stderr := &cappedBuffer{max: stderrMax}
	group := newPGIDWriter(stderr)
	s.Stdin, s.Stdout, s.Stderr = c.stdin, out, group
	if err := s.Start(reportingGroup(c.line)); err != nil {
		return Result{}, fmt.Errorf("%s: %s: %w (%v)", r.host, c.what, ErrConnectionLost, err)
	}
	err, cancelled := waitSession(ctx, s)
	if cancelled {
		pgid := group.await(pgidWait)
		s.Close()
		r.killGroup(ctx, pgid)
		return Result{}, fmt.Errorf("%s: %s: %w", r.host, c.what, err)
	}
	group.flush()
	var exit *ssh.ExitError
	switch {
	case out.err != nil:
		return Result{}, transferError(r.host, c.what, out.err)
	case err == nil:
		return Result{Stdout: stdout.Bytes(), Stderr: stderr.buf.Bytes()}, nil
	case errors.As(err, &exit):
		code := exit.ExitStatus()
		if exit.Signal() != "" {
			code = signalExitCode(exit.Signal())
		}
		return Result{ExitCode: code, Stdout: stdout.Bytes(), Stderr: stderr.buf.Bytes()}, nil
	}
	return Result{}, fmt.Errorf("%s: %s: %w (%v)", r.host, c.what, ErrConnectionLost, err)
}

// waitSession waits for the command on s to end, or for ctx; cancelled
// says which, and err is then ctx.Err().
func waitSession(ctx context.Context, s *ssh.Session) (err error, cancelled bool) {
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err := <-done:
		return err, false
	case <-ctx.Done():
		return ctx.Err(), true
	}
}

// Run implements Remote.
func (r *sshRemote) Run(ctx context.Context, cmd string) (Result, error) {
	res, err := r.exec(ctx, command{
		what:  "`" + clip(firstLine(cmd), 80) + "`",
		line:  wrapCommand(r.priv, cmd),
		stdin: commandStdin(r.priv, r.sudoPassword(), nil),
	})
	if err != nil {
		return Result{}, err
	}
	if r.priv != asRoot {
		if err := sudoError(r.host, r.d.cfg.User, res); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// abortingWriter passes writes on to w. Its first failure is kept in err and
// calls abort, so that the remote command stops instead of blocking on a
// full channel window.
type abortingWriter struct {
	w     io.Writer
	abort func()
	err   error
}

func (a *abortingWriter) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.w.Write(p)
	if err != nil {
		a.err = err
		a.abort()
	}
	return n, err
}

// cappedBuffer keeps the first max bytes written to it and drops the rest.
type cappedBuffer struct {
	buf bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
