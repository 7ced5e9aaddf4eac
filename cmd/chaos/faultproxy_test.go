package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/faultproxy"
)

// Bad arguments are one line and exit 254; a proxy that is not there is
// exit 255 once --timeout passed.
func TestFaultProxyRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want int
		line string
	}{
		{[]string{"fault-proxy", "serve"}, exitUsage, "chaos: fault-proxy serve: --dir is required (where the control socket goes)\n"},
		{[]string{"fault-proxy", "serve", "--dir", dir, "--max-conns", "0"}, exitUsage, "chaos: fault-proxy serve: --max-conns 0 is outside [1, 4096]\n"},
		{[]string{"fault-proxy", "serve", "--dir", dir, "--max-conns", "4097"}, exitUsage, "chaos: fault-proxy serve: --max-conns 4097 is outside [1, 4096]\n"},
		{[]string{"fault-proxy", "set", "[]"}, exitUsage, "chaos: fault-proxy set: --dir and --owner are required\n"},
		{[]string{"fault-proxy", "set", "--dir", dir, "--owner", "n1", "{"}, exitUsage,
			"chaos: fault-proxy set: LINKS: unexpected end of JSON input (want a JSON array of {\"from\", \"to\", \"delay_ms\", \"jitter_ms\", \"rate_kbit\"})\n"},
		{[]string{"fault-proxy", "set", "--dir", dir, "--owner", "n1", `[{"from":"10.0.0.1","to":"nowhere"}]`}, exitUsage, ""},
		{[]string{"fault-proxy", "set", "--dir", dir, "--owner", "n1", "--timeout", "100ms", "[]"}, exitSetup, ""},
	} {
		var errOut bytes.Buffer
		assert.Equal(t, tc.want, runWith(tc.args, &errOut), "%v: %s", tc.args, errOut.String())
		if tc.line != "" {
			assert.Equal(t, tc.line, errOut.String(), "%v", tc.args)
		}
		assert.Equal(t, 1, bytes.Count(errOut.Bytes(), []byte("\n")), "%v: one line: %q", tc.args, errOut.String())
	}
}

// set talks to a running proxy: it prints its status, and a link the
// proxy refuses is exit 255 with the proxy's reason.
func TestFaultProxySetTalksToTheProxy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fault-proxy")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- faultproxy.Run(ctx, faultproxy.Config{Dir: dir, Log: slog.New(slog.DiscardHandler)}) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"fault-proxy", "set", "--dir", dir, "--owner", "n1", `[{"from":"10.0.0.1","to":"10.0.0.2","delay_ms":5}]`})
	require.NoError(t, cmd.Execute())
	var st faultproxy.Status
	require.NoError(t, json.Unmarshal(out.Bytes(), &st))
	assert.Positive(t, st.Port)
	assert.Equal(t, 5.0, st.Owners["n1"][0].DelayMS)
	assert.Equal(t, faultproxy.Conns{Max: faultproxy.DefaultMaxConns}, st.Conns)

	var errOut bytes.Buffer
	code := runWith([]string{"fault-proxy", "set", "--dir", dir, "--owner", "n1", `[{"from":"10.0.0.1","to":"10.0.0.1"}]`}, &errOut)
	assert.Equal(t, exitSetup, code)
	assert.Equal(t, "chaos: fault proxy refused: set links of n1: link 10.0.0.1 -> 10.0.0.1: a link joins two addresses\n", errOut.String())
}
