package control

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// exitMarker starts the last line a command run by a dockerRemote writes
// to stderr: the exit status of the user's command. Its absence means the
// stream ended before the command did: the Engine connection was lost.
const exitMarker = "chaos-exit="

// reportingExit is cmd for `docker exec ... sh -c`: the shell that runs it
// reports its process group first (runc starts every exec as the leader of
// a new session and group, so its $$ is the group's id), runs cmd in a
// shell of its own (so that an `exit` in cmd cannot skip the report), and
// reports cmd's status last, after a newline of its own.
func reportingExit(cmd string) string {
	return "echo " + pgidMarker + "$$ >&2; sh -c " + ShellQuote(cmd) +
		"; printf '\\n" + exitMarker + "%d\\n' $? >&2"
}

// Run implements Remote: `docker exec -u 0 CONTAINER sh -c ...`, or
// nsenter (see DockerNsenter).
func (r *dockerRemote) Run(ctx context.Context, cmd string) (Result, error) {
	what := "`" + clip(firstLine(cmd), 80) + "`"
	if r.closed.Load() {
		return Result{}, r.errClosed(what)
	}
	if r.mode == DockerNsenter {
		return r.runNsenter(ctx, what, cmd)
	}
	token := runToken()
	// Not ended with ctx: the docker command may not have started the
	// exec yet when ctx ends, and killing it then would leave the command
	// to start unseen. It is killed once the command's group is.
	c := r.command(context.WithoutCancel(ctx), "exec", "-u", "0", r.container, "sh", "-c", reportingExit(cmd), token)
	var stdout bytes.Buffer
	stderr := &tailBuffer{head: cappedBuffer{max: stderrMax}}
	group := newPGIDWriter(stderr)
	c.Stdout, c.Stderr = &stdout, group
	err := c.Start()
	if err == nil {
		err = r.wait(ctx, c, group, token)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Result{}, fmt.Errorf("%s: %s: %w", r.host, what, ctxErr)
	}
	group.flush()
	if status, ok := stderr.exit(); ok {
		return Result{ExitCode: status, Stdout: stdout.Bytes(), Stderr: stderr.head.buf.Bytes()}, nil
	}
	return r.unreported(what, group.pgid.Load() != 0, stdout.Bytes(), stderr.head.buf.Bytes(), err)
}

// wait waits for the docker command c, or for ctx: then it kills the
// command's process group in the container, by the id the command reported
// (waiting up to killTimeout for the report, which comes once the exec has
// started) or, failing that, by token, and then c.
func (r *dockerRemote) wait(ctx context.Context, c *exec.Cmd, group *pgidWriter, token string) error {
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	r.killGroup(ctx, group.await(killTimeout), token)
	_ = c.Process.Kill()
	return <-done
}

// runToken is a new word that names one command's shell in the
// container's process table (its $0), for killGroup's fallback.
func runToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "chaos-run-" + hex.EncodeToString(b[:])
}

// unreported is how a command whose status never came back ended: the
// docker command's refusal before it ran (the container stopped or paused,
// no shell in it, the Engine down), the command killed with its shell by a
// signal (the container killed under it), or, once it had started,
// ErrConnectionLost.
func (r *dockerRemote) unreported(what string, started bool, stdout, stderr []byte, err error) (Result, error) {
	msg := firstLine(lastLines(string(stderr), 1))
	var exit *exec.ExitError
	isExit := errors.As(err, &exit)
	switch {
	case !isExit && err != nil:
		return Result{}, fmt.Errorf("%s: %s: docker exec: %w", r.host, what, err)
	case !started && refusedByDocker(msg):
		return Result{}, fmt.Errorf("%s: %s: docker exec: %s", r.host, what, clip(msg, 240))
	case started && isExit && exit.ExitCode() >= 128 && !refusedByDocker(msg):
		return Result{ExitCode: exit.ExitCode(), Stdout: stdout, Stderr: stderr}, nil
	}
	if msg == "" {
		msg = "the stream ended before the command's status"
	}
	return Result{}, fmt.Errorf("%s: %s: %w (%s)", r.host, what, ErrConnectionLost, clip(msg, 240))
}

// refusedByDocker says whether the docker command's last stderr line is
// its own error, not the command's.
func refusedByDocker(msg string) bool {
	return strings.HasPrefix(msg, "Error response from daemon") || strings.HasPrefix(msg, "Error: ") ||
		strings.Contains(msg, "OCI runtime exec failed") || daemonDown(msg)
}

// lastLines is the last n non-empty lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// tailBuffer keeps the first bytes of a stream in head, as cappedBuffer
// does, and its last tailMax bytes, where the exit report is.
type tailBuffer struct {
	head  cappedBuffer
	tail  []byte
	total int
}

// tailMax holds the exit report: a newline, exitMarker, up to ten digits
// and a newline.
const tailMax = 32

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.total += len(p)
	t.head.Write(p)
	t.tail = append(t.tail, p...)
	if len(t.tail) > tailMax {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailMax:]...)
	}
	return len(p), nil
}

// exit is the status the stream ended with, and whether it did; the
// report is then taken out of head, when head holds it whole.
func (t *tailBuffer) exit() (int, bool) {
	i := bytes.LastIndex(t.tail, []byte("\n"+exitMarker))
	if i < 0 || !bytes.HasSuffix(t.tail, []byte("\n")) {
		return 0, false
	}
	report := t.tail[i:]
	status, err := strconv.Atoi(string(report[1+len(exitMarker) : len(report)-1]))
	if err != nil {
		return 0, false
	}
	if t.total == t.head.buf.Len() {
		t.head.buf.Truncate(t.head.buf.Len() - len(report))
	}
	return status, true
}
