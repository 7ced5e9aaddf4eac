package faultproxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The control API sets and shows owners' links, and refuses what it
// cannot take with 400 and the reason.
func TestControlHandler(t *testing.T) {
	tab := &Table{}
	srv := httptest.NewServer(Handler(tab, 4242, func() Conns { return Conns{Open: 2, Max: 256, Refused: 7} }))
	t.Cleanup(srv.Close)
	do := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	code, body := do(http.MethodPut, "/links/n1", `{"links":[{"from":"10.0.0.1","to":"10.0.0.2","rate_kbit":64}]}`)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, `{"port":4242,"owners":{"n1":[{"from":"10.0.0.1","to":"10.0.0.2","rate_kbit":64}]},"conns":{"open":2,"max":256,"refused":7}}`, body)
	assert.Equal(t, Behavior{RateKbit: 64}, tab.Lookup(netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")))

	for _, tc := range []struct{ body, want string }{
		{`{"links":[{"from":"10.0.0.1","to":"10.0.0.2","delay":5}]}`, `{"error":"links: json: unknown field \"delay\""}`},
		{`{"links":[{"from":"10.0.0.1","to":"10.0.0.2","jitter_ms":-1}]}`, `{"error":"set links of n1: link 10.0.0.1 -\u003e 10.0.0.2: delay 0 ms plus jitter -1 ms outside [0, 60000] ms"}`},
	} {
		code, body = do(http.MethodPut, "/links/n1", tc.body)
		assert.Equal(t, http.StatusBadRequest, code)
		assert.Equal(t, tc.want, body)
	}
	code, _ = do(http.MethodPost, "/links/n1", `{}`)
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	code, body = do(http.MethodGet, "/links", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"rate_kbit":64`, "a refused request changed nothing")
}

// SetLinks waits for a proxy that is starting, and gives up with ctx.
func TestSetLinksWaitsForTheSocket(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := SetLinks(ctx, ControlSocket(dir), "n1", nil)
	require.ErrorContains(t, err, "fault proxy at "+filepath.Join(dir, "control.sock")+": ")

	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	setDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := SetLinks(ctx, ControlSocket(dir), "n1", nil) // before the proxy is up
		setDone <- err
	}()
	go func() { done <- Run(runCtx, Config{Dir: dir, Log: slog.New(slog.DiscardHandler)}) }()
	require.NoError(t, <-setDone)
	stop()
	require.NoError(t, <-done)
}
