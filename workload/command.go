package workload

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"chaos/history"
)

// CommandClient is the Client of one node through a client command: a
// long-running process on the controller, started with `sh -c CMD` in the
// description's directory, that takes one JSON request per line on stdin
// and answers each with one JSON line on stdout (README, "Your own
// system"; commandRequest and commandAnswer).
//
// A process that exits, does not answer before the request's ctx ends, or
// prints a line that is not the answer to the request in flight is
// killed with its process group; that operation is info, and the next one
// starts a new process (a restart, counted by Restarts). An operation the
// process could not be started for is fail: nothing was sent.
type CommandClient struct {
	node    string
	cmdline string
	dir     string
	// StartGrace is how long a new process may take to answer its first
	// request, past the request timeout: a process's start-up (an
	// interpreter loading) is not the node's delay.
	StartGrace time.Duration
	// now is the clock the requests' timeout_ms is measured on.
	now func() time.Time

	proc     *clientProcess // nil: none runs
	started  bool           // a process was started before
	lastID   uint64
	restarts atomic.Int64
}

var _ Client = (*CommandClient)(nil)

// DefaultStartGrace is CommandClient.StartGrace's default.
const DefaultStartGrace = 10 * time.Second

// NewCommandClient returns a client of the node named node that runs
// cmdline (a shell command line) in dir, and starts its process.
func NewCommandClient(node, cmdline, dir string) (*CommandClient, error) {
	c := &CommandClient{node: node, cmdline: cmdline, dir: dir, StartGrace: DefaultStartGrace, now: time.Now}
	if err := c.start(); err != nil {
		return nil, fmt.Errorf("client command %q for %s: %w", cmdline, node, err)
	}
	return c, nil
}

// Restarts is how many times a new process replaced one that failed.
// Safe to call from any goroutine.
func (c *CommandClient) Restarts() int { return int(c.restarts.Load()) }

// Close kills the process group, if a process runs.
func (c *CommandClient) Close() error {
	if c.proc != nil {
		c.proc.stop()
		c.proc = nil
	}
	return nil
}

// Do performs op through the process; see CommandClient.
func (c *CommandClient) Do(ctx context.Context, op Op) history.Outcome {
	out := c.do(ctx, op)
	out.Node = c.node
	return out
}

func (c *CommandClient) do(ctx context.Context, op Op) history.Outcome {
	if c.proc == nil {
		if err := c.start(); err != nil {
			return failf("client command %q did not start: %v; not sent", c.cmdline, err)
		}
	}
	c.lastID++
	id := c.lastID
	deadline, _ := ctx.Deadline()
	req, err := newCommandRequest(id, op, deadline, c.now())
	if err != nil {
		return failf("encode request %d: %v (a bug in chaos)", id, err)
	}
	if err := c.proc.send(ctx, req); err != nil {
		return c.broken(fmt.Sprintf("did not take request %d (%v)", id, err))
	}
	line, err := c.answer(ctx, id)
	if err != nil {
		return c.broken(err.Error())
	}
	out, err := parseCommandAnswer(line, id, op)
	if err != nil {
		return c.broken(fmt.Sprintf("printed an invalid answer to request %d (%v): %s", id, err, clip(line)))
	}
	c.proc.answered = true
	return out
}

// answer waits for the answer line to request id until ctx ends, or, for
// a process that has not answered yet, until StartGrace after its start,
// if that is later and ctx ended by its deadline (not an interrupt).
func (c *CommandClient) answer(ctx context.Context, id uint64) ([]byte, error) {
	p := c.proc
	done := ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return nil, fmt.Errorf("closed its stdout before answering request %d (%v)", id, p.readErr)
			}
			return line, nil
		case <-done:
			left := c.StartGrace - time.Since(p.startedAt)
			if p.answered || left <= 0 || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("gave no answer to request %d before the request timeout", id)
			}
			done, grace = nil, time.After(left)
		case <-grace:
			return nil, fmt.Errorf("gave no answer to its first request (%d) within %v of its start", id, c.StartGrace)
		}
	}
}

// start starts a process, counting a restart when one ran before.
func (c *CommandClient) start() error {
	p, err := startClientProcess(c.cmdline, c.dir)
	if err != nil {
		return err
	}
	if c.started {
		c.restarts.Add(1)
	}
	c.started, c.proc = true, p
	return nil
}

// broken kills the process, which the next operation replaces, and
// returns the info outcome of the operation in flight.
func (c *CommandClient) broken(what string) history.Outcome {
	p := c.proc
	c.proc = nil
	p.stop()
	msg := "client command " + what
	if d := p.describe(); d != "" {
		msg += "; " + d
	}
	return history.Outcome{Type: history.Info, Error: msg + "; outcome unknown, the command is restarted"}
}
