package remotetest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
)

// Every call is recorded in order with its host, whatever it is; Take
// hands them over once.
func TestRecorderRecordsInOrder(t *testing.T) {
	ctx := context.Background()
	var rec remotetest.Recorder
	n1, n2 := rec.Remote("n1", nil), rec.Remote("n2", nil)
	assert.Equal(t, "n1", n1.Host())
	_, err := n1.Run(ctx, "echo a")
	require.NoError(t, err)
	require.NoError(t, n2.Upload(ctx, "/build/chaos", "/opt/chaos/chaos", 0o755))
	rec.Note("n2", "hook POST /faults/clock")
	require.NoError(t, n1.Download(ctx, "/var/log/n1.log", "/tmp/n1.log"))
	require.NoError(t, n1.Close())

	calls := rec.Take()
	assert.Equal(t, []remotetest.Call{
		{Host: "n1", Kind: remotetest.Run, Cmd: "echo a"},
		{Host: "n2", Kind: remotetest.Upload, Local: "/build/chaos", Remote: "/opt/chaos/chaos", Mode: 0o755},
		{Host: "n2", Kind: remotetest.Note, Text: "hook POST /faults/clock"},
		{Host: "n1", Kind: remotetest.Download, Local: "/tmp/n1.log", Remote: "/var/log/n1.log"},
	}, calls)
	assert.Equal(t, "run echo a\nupload /build/chaos -> /opt/chaos/chaos -rwxr-xr-x\n"+
		"note hook POST /faults/clock\ndownload /var/log/n1.log\n", remotetest.Transcript(calls))
	assert.Equal(t, []string{"echo a"}, remotetest.Cmds(calls))
	assert.Empty(t, rec.Take(), "taken")
}

// The answer scripts each call: exit code, output, error, by host and by
// command; a transfer gets the answer's error.
func TestRemoteAnswersAsScripted(t *testing.T) {
	ctx := context.Background()
	var rec remotetest.Recorder
	down := errors.New("connection refused")
	answer := func(c remotetest.Call) (control.Result, error) {
		switch {
		case c.Host == "n3":
			return control.Result{}, down
		case c.Cmd == "hostname":
			return control.Result{Stdout: []byte(c.Host + "\n")}, nil
		case c.Cmd == "false":
			return control.Result{ExitCode: 1, Stderr: []byte("no")}, nil
		}
		return control.Result{}, nil
	}
	res, err := rec.Remote("n1", answer).Run(ctx, "hostname")
	require.NoError(t, err)
	assert.Equal(t, "n1\n", string(res.Stdout))
	res, err = rec.Remote("n1", answer).Run(ctx, "false")
	require.NoError(t, err)
	assert.Equal(t, control.Result{ExitCode: 1, Stderr: []byte("no")}, res)
	_, err = rec.Remote("n3", answer).Run(ctx, "true")
	assert.ErrorIs(t, err, down)
	assert.ErrorIs(t, rec.Remote("n3", answer).Upload(ctx, "a", "b", 0o644), down)
	assert.Len(t, rec.Take(), 4, "failed calls are recorded too")
}

// FailOn fails the commands that contain its substring, and only those.
func TestFailOn(t *testing.T) {
	ctx := context.Background()
	r := new(remotetest.Recorder).Remote("n2", remotetest.FailOn("kill -KILL", 137))
	res, err := r.Run(ctx, "kill -KILL 42")
	require.NoError(t, err)
	assert.EqualError(t, res.Err("n2", "kill -KILL 42"), "n2: `kill -KILL 42` exited 137: canned failure")
	res, err = r.Run(ctx, "kill -STOP 42")
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.NoError(t, r.Upload(ctx, "kill -KILL", "x", 0o644), "transfers succeed")
}

// Remotes used from many goroutines lose no call, and each goroutine's
// calls keep their order (run under -race); an answer may record too.
func TestRecorderIsSafeForConcurrentUse(t *testing.T) {
	var rec remotetest.Recorder
	answer := func(c remotetest.Call) (control.Result, error) {
		rec.Note(c.Host, "answered "+c.Cmd)
		return control.Result{}, nil
	}
	var wg sync.WaitGroup
	for i := range 8 {
		host := fmt.Sprintf("n%d", i)
		wg.Go(func() {
			r := rec.Remote(host, answer)
			for j := range 50 {
				_, _ = r.Run(context.Background(), fmt.Sprint(j))
			}
		})
	}
	wg.Wait()
	calls := rec.Take()
	require.Len(t, calls, 8*50*2)
	next := map[string]int{}
	for _, c := range calls {
		if c.Kind == remotetest.Run {
			assert.Equal(t, fmt.Sprint(next[c.Host]), c.Cmd, c.Host)
			next[c.Host]++
		}
	}
}
