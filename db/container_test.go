package db

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/control"
)

// fakeContainer is a container host: a Remote that refuses commands and a
// Container that records the Engine's verbs and plays their effect on its
// state.
type fakeContainer struct {
	control.Remote
	state, addr, policy string
	verbs               []string
	freezeFailures      int // pauses that fail with "unable to freeze" first
}

func (f *fakeContainer) Name() string { return "c1" }

func (f *fakeContainer) Do(_ context.Context, verb string, args ...string) error {
	f.verbs = append(f.verbs, strings.TrimSpace(verb+" "+strings.Join(args, " ")))
	switch verb {
	case "pause":
		if f.freezeFailures > 0 {
			f.freezeFailures--
			return errors.New("docker pause c1: OCI runtime pause failed: unable to freeze: unknown")
		}
		f.state = "paused"
	case "unpause", "start":
		f.state = "running"
	case "kill", "stop":
		f.state = "exited"
	}
	return nil
}

func (f *fakeContainer) Logs(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, "etcd says hello\n")
	return err
}

func (f *fakeContainer) RestartPolicy(context.Context) (string, error) { return f.policy, nil }

func (f *fakeContainer) Inspect(context.Context) (string, string, error) { return f.state, f.addr, nil }

func TestContainerNodesActOnTheContainer(t *testing.T) {
	ctx := context.Background()
	d := ContainerNodes(&Etcd{Layout: DefaultLayout()})
	n := Node{Name: "n1", Addr: "10.0.0.11"}
	c := &fakeContainer{state: "paused", addr: "10.0.0.11", policy: "no"}

	require.NoError(t, d.Install(ctx, c, n))
	require.NoError(t, d.Kill(ctx, c, n))
	require.Equal(t, []string{"unpause", "kill --signal KILL"}, c.verbs, "the Engine kills no paused container")
	require.NoError(t, d.Kill(ctx, c, n), "a stopped node is no error")
	require.NoError(t, d.Start(ctx, c, n))
	require.ErrorIs(t, d.Start(ctx, c, n), ErrAlreadyRunning)
	c.freezeFailures = 2
	require.NoError(t, d.Pause(ctx, c, n), "the freezer is tried again")
	require.NoError(t, d.Resume(ctx, c, n))
	require.NoError(t, d.Resume(ctx, c, n), "resuming a running node is no error")
	require.NoError(t, d.Stop(ctx, c, n))
	require.Equal(t, []string{"unpause", "kill --signal KILL", "start", "pause", "pause", "pause", "unpause", "stop --time 5"}, c.verbs)

	dir := t.TempDir()
	require.NoError(t, d.CollectLogs(ctx, c, n, dir+"/nodes/n1"))
	require.FileExists(t, dir+"/nodes/n1/etcd.log")
}

func TestContainerNodesRefusals(t *testing.T) {
	ctx := context.Background()
	d := ContainerNodes(&Etcd{Layout: DefaultLayout()})
	n := Node{Name: "n1", Addr: "10.0.0.11"}

	err := d.Install(ctx, &fakeContainer{policy: "always"}, n)
	require.ErrorContains(t, err, "n1: install: container c1 restarts by itself (restart policy always)")

	moved := &fakeContainer{state: "exited", addr: "10.0.0.99"}
	err = d.Start(ctx, moved, n)
	require.ErrorContains(t, err, "container c1 came back at 10.0.0.99, not 10.0.0.11: give it a fixed address")

	err = d.Kill(ctx, control.NewLocal("n1"), n)
	require.ErrorContains(t, err, "n1: not a container (docker:NAME)")
}

// What a container that is the node offers is what the system says over
// the network: nothing that needs chaos to have started its process.
func TestContainerNodesCapabilities(t *testing.T) {
	caps := CapabilitiesOf(ContainerNodes(&Etcd{Layout: DefaultLayout()}))
	require.NotNil(t, caps.Leader)
	require.NotNil(t, caps.States)
	require.Nil(t, caps.Processes)
	require.Nil(t, caps.Storage)
	require.Nil(t, caps.FakeClocks)
	require.Nil(t, caps.Membership)
	require.Nil(t, caps.Hooks)
}
