package faultfs

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
)

// Host runs the client commands on the host and reads their answers.
func TestHostRunsTheClientCommands(t *testing.T) {
	var rec remotetest.Recorder
	r := rec.Remote("n1", func(c remotetest.Call) (control.Result, error) {
		switch {
		case strings.Contains(c.Cmd, " power-loss "):
			return control.Result{Stdout: []byte(`{"dropped":{"pending_files":2,"undo_bytes":10,"pending_names":1}}` + "\n")}, nil
		case strings.Contains(c.Cmd, " status "):
			return control.Result{Stdout: []byte("not json\n")}, nil
		case strings.Contains(c.Cmd, " clear "):
			return control.Result{ExitCode: 255, Stderr: []byte("chaos: fault file system at /s: dial unix /s: connect: no such file or directory\n")}, nil
		}
		return control.Result{Stdout: []byte(`{"pending_files":0,"undo_bytes":0,"pending_names":0,"errors":{"kind":"eio","on":"fsyncs"}}`)}, nil
	})
	h := Host{Path: "/opt/chaos/chaos", Socket: "/var/lib/chaos/n1/faultfs.sock"}
	ctx := context.Background()

	res, err := h.PowerLoss(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, PowerLossResult{Dropped: Status{PendingFiles: 2, UndoBytes: 10, PendingNames: 1}}, res)
	st, err := h.SetErrors(ctx, r, ErrorsRequest{Kind: KindEIO, On: OnFsyncs, ForMS: 1500})
	require.NoError(t, err)
	assert.Equal(t, &ErrorMode{Kind: KindEIO, On: OnFsyncs}, st.Errors)
	_, err = h.Status(ctx, r)
	assert.EqualError(t, err, `faultfs status on n1: unexpected answer "not json"`)
	_, err = h.ClearErrors(ctx, r)
	assert.EqualError(t, err, "faultfs clear: n1: `/opt/chaos/chaos faultfs clear --control /var/lib/chaos/n1/faultfs.sock` exited 255: chaos: fault file system at /s: dial unix /s: connect: no such file or directory")

	assert.Equal(t, []string{
		"/opt/chaos/chaos faultfs power-loss --control /var/lib/chaos/n1/faultfs.sock",
		"/opt/chaos/chaos faultfs errors --control /var/lib/chaos/n1/faultfs.sock --kind eio --on fsyncs --for 1500ms",
		"/opt/chaos/chaos faultfs status --control /var/lib/chaos/n1/faultfs.sock",
		"/opt/chaos/chaos faultfs clear --control /var/lib/chaos/n1/faultfs.sock",
	}, remotetest.Cmds(rec.Take()))
	assert.Equal(t, []string{"/opt/chaos/chaos", "faultfs", "serve", "--backing", "/b", "--mount", "/m", "--control", "/var/lib/chaos/n1/faultfs.sock"},
		h.ServeArgv("/b", "/m"))
	h.Names = NamesOrdered
	assert.Equal(t, []string{"/opt/chaos/chaos", "faultfs", "serve", "--backing", "/b", "--mount", "/m", "--control", "/var/lib/chaos/n1/faultfs.sock",
		"--names", "ordered"}, h.ServeArgv("/b", "/m"))
	h.UndoMemoryMiB = 8
	assert.Equal(t, []string{"/opt/chaos/chaos", "faultfs", "serve", "--backing", "/b", "--mount", "/m", "--control", "/var/lib/chaos/n1/faultfs.sock",
		"--names", "ordered", "--undo-memory-mib", "8"}, h.ServeArgv("/b", "/m"))
}
