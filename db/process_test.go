package db

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
)

func TestParseProcess(t *testing.T) {
	for out, want := range map[string]Process{"": {}, "\n": {}, "123 S\n": {Pid: 123}, "77 T\n": {Pid: 77, Stopped: true},
		"9 R": {Pid: 9}, "10 t": {Pid: 10}} {
		got, err := parseProcess(out)
		require.NoError(t, err, "%q", out)
		assert.Equal(t, want, got, "%q", out)
	}
	for _, out := range []string{"x S", "0 S", "-1 T", "12", "12 S extra"} {
		_, err := parseProcess(out)
		assert.ErrorContains(t, err, "want a pid and a state letter", "%q", out)
	}
}

// Process tells a running daemon from a stopped one (SIGSTOP) and from
// none.
func TestDaemonProcessSeesAPause(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	d := Daemon{Dir: t.TempDir(), Name: "d"}
	r := control.NewLocal("n1")
	ctx := context.Background()
	p, err := d.Process(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, Process{}, p, "no pidfile")

	require.NoError(t, d.Start(ctx, r, []string{"sleep", "30"}))
	t.Cleanup(func() { _ = d.Stop(context.Background(), r) })
	p, err = d.Process(ctx, r)
	require.NoError(t, err)
	require.Positive(t, p.Pid)
	assert.False(t, p.Stopped)

	require.NoError(t, d.Pause(ctx, r))
	require.Eventually(t, func() bool {
		p, err := d.Process(ctx, r)
		return err == nil && p.Stopped
	}, 5*time.Second, 10*time.Millisecond, "state T after SIGSTOP")
	require.NoError(t, d.Resume(ctx, r))
	require.Eventually(t, func() bool {
		p, err := d.Process(ctx, r)
		return err == nil && p.Pid > 0 && !p.Stopped
	}, 5*time.Second, 10*time.Millisecond, "running after SIGCONT")

	require.NoError(t, d.Stop(ctx, r))
	p, err = d.Process(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, Process{}, p, "stopped")
}
