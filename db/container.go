package db

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"chaos/control"
)

// containerNodes is a system whose every node is a Docker container whose
// main process is the server (a compose file's etcd, say): chaos installs
// and starts nothing; it starts, stops, kills, pauses and resumes the
// container itself through the Engine, and takes its logs from `docker
// logs`. What the system says of itself over the network (leader, states,
// timing, peers, clocks) is the inner system's; what needs its process or
// files on the host (fault hooks, storage, fake clocks, membership, event
// logs, pidfiles) is not there.
type containerNodes struct {
	inner DB
}

// ContainerNodes is inner with every node a container that is the node
// (see containerNodes). Its methods fail for a node whose host is not a
// container.
func ContainerNodes(inner DB) DB { return containerNodes{inner} }

func (c containerNodes) Name() string { return c.inner.Name() }

// container is the container r reaches, or an error naming n.
func container(r control.Remote, n Node) (control.Container, error) {
	ct, ok := control.ContainerOf(r)
	if !ok {
		return nil, fmt.Errorf("%s: not a container (docker:NAME): a node that is its container needs one", n.Name)
	}
	return ct, nil
}

// do runs the Engine's verb on n's container.
func (c containerNodes) do(ctx context.Context, r control.Remote, n Node, verb string, args ...string) error {
	ct, err := container(r, n)
	if err != nil {
		return err
	}
	return wrap(n, verb, ct.Do(ctx, verb, args...))
}

// Install installs nothing (the container holds the server); it refuses a
// container with a restart policy, which would bring a killed node back
// behind chaos's back.
func (c containerNodes) Install(ctx context.Context, r control.Remote, n Node) error {
	ct, err := container(r, n)
	if err != nil {
		return err
	}
	policy, err := ct.RestartPolicy(ctx)
	if err != nil {
		return wrap(n, "install", err)
	}
	if policy != "" && policy != "no" {
		return wrap(n, "install", fmt.Errorf("container %s restarts by itself (restart policy %s): chaos's kills would be undone behind its back; `docker update --restart no %s`", ct.Name(), policy, ct.Name()))
	}
	return nil
}

// Start starts the container unless it runs (a paused one is unpaused),
// and fails when it came back at another address than n's: clients and
// peers would not find it (give it a fixed one).
func (c containerNodes) Start(ctx context.Context, r control.Remote, n Node) error {
	ct, err := container(r, n)
	if err != nil {
		return err
	}
	state, _, err := ct.Inspect(ctx)
	if err != nil {
		return wrap(n, "start", err)
	}
	switch state {
	case "running":
		return wrap(n, "start", fmt.Errorf("container %s: %w", ct.Name(), ErrAlreadyRunning))
	case "paused":
		err = ct.Do(ctx, "unpause")
	default:
		err = ct.Do(ctx, "start")
	}
	if err != nil {
		return wrap(n, "start", err)
	}
	if _, addr, err := ct.Inspect(ctx); err == nil && addr != n.Addr {
		return wrap(n, "start", fmt.Errorf("container %s came back at %s, not %s: give it a fixed address (docker run --ip, compose ipv4_address)", ct.Name(), addr, n.Addr))
	}
	return nil
}

func (c containerNodes) Ready(ctx context.Context, n Node) error { return c.inner.Ready(ctx, n) }
func (c containerNodes) Up(ctx context.Context, n Node) error    { return c.inner.Up(ctx, n) }
func (c containerNodes) ClientAddr(n Node) string                { return c.inner.ClientAddr(n) }

// Kill kills the container's main process with SIGKILL (the container
// stops; a paused one is unpaused first, as the Engine requires); one that
// does not run is no error.
func (c containerNodes) Kill(ctx context.Context, r control.Remote, n Node) error {
	if err := c.Resume(ctx, r, n); err != nil {
		return err
	}
	return c.unlessStopped(ctx, r, n, "kill", "--signal", "KILL")
}

// Pause freezes the container (docker pause). The freezer can fail to
// freeze a process caught in the kernel ("unable to freeze"): it is tried
// up to three times, 100 ms apart.
func (c containerNodes) Pause(ctx context.Context, r control.Remote, n Node) error {
	var err error
	for range 3 {
		if err = c.do(ctx, r, n, "pause"); err == nil || !strings.Contains(err.Error(), "unable to freeze") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

// Resume unpauses the container; one that is not paused is no error.
func (c containerNodes) Resume(ctx context.Context, r control.Remote, n Node) error {
	ct, err := container(r, n)
	if err != nil {
		return err
	}
	if state, _, err := ct.Inspect(ctx); err != nil || state != "paused" {
		return wrap(n, "unpause", err)
	}
	return wrap(n, "unpause", ct.Do(ctx, "unpause"))
}

// Stop stops the container (SIGTERM, SIGKILL after 5 s), unpausing it
// first; one that does not run is no error.
func (c containerNodes) Stop(ctx context.Context, r control.Remote, n Node) error {
	if err := c.Resume(ctx, r, n); err != nil {
		return err
	}
	return c.unlessStopped(ctx, r, n, "stop", "--time", "5")
}

// unlessStopped runs verb on n's container when it runs or is paused.
func (c containerNodes) unlessStopped(ctx context.Context, r control.Remote, n Node, verb string, args ...string) error {
	ct, err := container(r, n)
	if err != nil {
		return err
	}
	state, _, err := ct.Inspect(ctx)
	if err != nil {
		return wrap(n, verb, err)
	}
	if state != "running" && state != "paused" {
		return nil
	}
	return wrap(n, verb, ct.Do(ctx, verb, args...))
}

// Wipe does nothing: chaos does not know where the container keeps its
// data, nor can it reach a stopped container's files. Start from fresh
// containers (`docker compose down -v && docker compose up -d`).
func (c containerNodes) Wipe(ctx context.Context, r control.Remote, n Node) error {
	_, err := container(r, n)
	return err
}

// CollectLogs writes `docker logs` of n's container to dir/<name>.log.
func (c containerNodes) CollectLogs(ctx context.Context, r control.Remote, n Node, dir string) error {
	ct, err := container(r, n)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := ct.Logs(ctx, &out); err != nil {
		return wrap(n, "logs", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return wrap(n, "logs", err)
	}
	return wrap(n, "logs", os.WriteFile(filepath.Join(dir, c.inner.Name()+".log"), out.Bytes(), 0o644))
}

// Capabilities are the inner system's that it answers over the network.
func (c containerNodes) Capabilities() Capabilities {
	in := CapabilitiesOf(c.inner)
	return Capabilities{Leader: in.Leader, States: in.States, Timing: in.Timing, Peers: in.Peers, Clocks: in.Clocks}
}
