package node

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/node/kv"
	"chaos/node/nodeapi"
)

// The client of chaos/node/nodeapi against the node's own handlers: each
// route, each typed answer, and how each error status maps to *Error.

// startSingleNode starts a one-member cluster in-process on ephemeral
// loopback ports and waits until it leads; it returns its client address.
func startSingleNode(t *testing.T) string {
	t.Helper()
	s, err := New(Config{Name: "n1", DataDir: t.TempDir(), ClientAddr: "127.0.0.1:0", PeerAddr: "127.0.0.1:0",
		Peers:             map[string]string{"n1": "127.0.0.1:1"},
		HeartbeatInterval: 10 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		RequestTimeout: 2 * time.Second, Seed: 1})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Stop(context.Background())) })
	addr := s.httpLn.Addr().String()
	c := nodeapi.NewClient(addr, &http.Client{Timeout: 5 * time.Second})
	require.Eventually(t, func() bool {
		st, err := c.Status(t.Context())
		return err == nil && st.Role == "leader"
	}, 10*time.Second, 10*time.Millisecond, "the single node never led")
	return addr
}

// apiError asserts that err is an *nodeapi.Error with status code whose
// message contains msg, and returns it.
func apiError(t *testing.T, err error, code int, msg string) *nodeapi.Error {
	t.Helper()
	var ae *nodeapi.Error
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, code, ae.Status, "%v", err)
	assert.Contains(t, ae.Message, msg)
	assert.NoError(t, ae.BodyErr)
	return ae
}

func TestClientKVRoundTrip(t *testing.T) {
	ctx := t.Context()
	addr := startSingleNode(t)
	c := nodeapi.NewClient(addr, nil)

	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, "n1", st.ID)
	assert.Equal(t, "n1", st.Leader)
	assert.NotZero(t, st.Term)

	_, found, err := c.Get(ctx, "k1", false)
	require.NoError(t, err)
	assert.False(t, found, "an absent key is not found, not an error")

	require.NoError(t, c.Put(ctx, "k1", "v1", nodeapi.WriteID{Client: 7, Seq: 1}))
	for _, stale := range []bool{false, true} {
		v, found, err := c.Get(ctx, "k1", stale)
		require.NoError(t, err)
		assert.True(t, found)
		assert.Equal(t, "v1", v, "stale=%v", stale)
	}

	require.NoError(t, c.CAS(ctx, "k1", "v1", "v2", nodeapi.WriteID{Client: 7, Seq: 2}))
	ae := apiError(t, c.CAS(ctx, "k1", "v1", "v3", nodeapi.WriteID{Client: 7, Seq: 3}), http.StatusConflict, nodeapi.CASMismatch)
	require.NotNil(t, ae.Value)
	assert.Equal(t, "v2", *ae.Value, "a mismatch carries the current value")
	ae = apiError(t, c.CAS(ctx, "absent", "x", "y", nodeapi.WriteID{}), http.StatusConflict, nodeapi.CASMismatch)
	assert.Nil(t, ae.Value, "the key is absent")

	require.NoError(t, c.Delete(ctx, "k1"))
	_, found, err = c.Get(ctx, "k1", false)
	require.NoError(t, err)
	assert.False(t, found)

	apiError(t, c.Put(ctx, "k2", strings.Repeat("x", kv.MaxValueBytes+1), nodeapi.WriteID{}),
		http.StatusRequestEntityTooLarge, "value over")
	_, _, err = c.Get(ctx, strings.Repeat("k", kv.MaxKeyBytes+1), false)
	apiError(t, err, http.StatusRequestEntityTooLarge, "key is")
	apiError(t, c.Put(ctx, "", "v", nodeapi.WriteID{}), http.StatusNotFound, "no route")

	// The bytes of a write's outcomes, which clients outside chaos may
	// depend on.
	for _, c := range []struct{ path, body, want string }{
		{"/kv/k3", `{"value":"5"}`, `{}`},
		{"/kv/k3/cas", `{"from":"4","to":"6"}`, `{"error":"cas mismatch","value":"5"}`},
		{"/kv/k4/cas", `{"from":"4","to":"6"}`, `{"error":"cas mismatch","value":null}`},
	} {
		method := http.MethodPut
		if strings.HasSuffix(c.path, "/cas") {
			method = http.MethodPost
		}
		req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+c.path, strings.NewReader(c.body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, c.want+"\n", string(b), "%s %s", method, c.path)
	}
}

// TestNodeAnswerBytes pins the answers' bytes that clients outside chaos
// may depend on.
func TestNodeAnswerBytes(t *testing.T) {
	s := newUnstartedServer(t, true)
	h := s.routes()
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/kv/k1?stale=true", "", `{"error":"key not found"}`},
		{"PUT", "/kv/k1", `{"value":"1"}`, `{"error":"no leader"}`},
		{"GET", "/faults", "", `{"clock":{"offset_ms":0,"rate":1},"drop":[],"net":{},"append":{"max_bytes":0}}`},
		{"GET", "/status", "", `{"id":"n1","role":"follower","term":0,"leader":"","commit":0,"applied":0,"last_index":0}`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, strings.NewReader(c.body)))
		assert.Equal(t, c.want+"\n", rec.Body.String(), "%s %s", c.method, c.path)
	}
}

func TestClientHooksRoundTrip(t *testing.T) {
	ctx := t.Context()
	srv := httptest.NewServer(newUnstartedServer(t, true).routes())
	t.Cleanup(srv.Close)
	c := nodeapi.NewClient(strings.TrimPrefix(srv.URL, "http://"), nil)

	f, err := c.SetPartition(ctx, []string{"n3", "n2"})
	require.NoError(t, err)
	assert.Equal(t, []string{"n2", "n3"}, f.Drop)
	_, err = c.SetPartition(ctx, []string{"n9"})
	apiError(t, err, http.StatusBadRequest, `unknown peer "n9"`)

	f, err = c.SetNet(ctx, nodeapi.NetFaults{Peers: []string{"n2"}, Loss: 0.5, DelayMS: 20})
	require.NoError(t, err)
	assert.Equal(t, 0.5, f.Net["n2"].Loss)
	assert.Equal(t, 20*time.Millisecond, f.Net["n2"].Delay)
	_, err = c.SetNet(ctx, nodeapi.NetFaults{Loss: 2})
	apiError(t, err, http.StatusBadRequest, "loss")

	f, err = c.SetClock(ctx, nodeapi.ClockFault{OffsetMS: 1500, Rate: 0.5})
	require.NoError(t, err)
	assert.Equal(t, nodeapi.ClockFault{OffsetMS: 1500, Rate: 0.5}, f.Clock)
	_, err = c.SetClock(ctx, nodeapi.ClockFault{Rate: -1})
	apiError(t, err, http.StatusBadRequest, "rate")

	f, err = c.Faults(ctx)
	require.NoError(t, err)
	assert.Equal(t, nodeapi.Faults{Clock: nodeapi.ClockFault{OffsetMS: 1500, Rate: 0.5}, Drop: []string{"n2", "n3"},
		Net: f.Net}, f)
	assert.Len(t, f.Net, 1)

	f, err = c.ResetClock(ctx)
	require.NoError(t, err)
	assert.Equal(t, nodeapi.ClockFault{Rate: 1}, f.Clock)
	f, err = c.ClearNet(ctx)
	require.NoError(t, err)
	assert.Empty(t, f.Net)
	assert.Len(t, f.Drop, 2, "clearing net faults keeps the drop list")
	f, err = c.HealPartition(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{}, f.Drop)

	_, err = c.SetPartition(ctx, []string{"n2"})
	require.NoError(t, err)
	f, err = c.ClearFaults(ctx)
	require.NoError(t, err)
	assert.Equal(t, nodeapi.Faults{Clock: nodeapi.ClockFault{Rate: 1}, Drop: []string{}, Net: f.Net}, f)
	assert.Empty(t, f.Net)
}

// TestClientErrorMapping: a node without a leader, a node without hooks,
// a node that does not run.
func TestClientErrorMapping(t *testing.T) {
	ctx := t.Context()
	srv := httptest.NewServer(newUnstartedServer(t, false).routes())
	t.Cleanup(srv.Close)
	c := nodeapi.NewClient(strings.TrimPrefix(srv.URL, "http://"), nil)

	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, nodeapi.Status{ID: "n1", Role: "follower"}, st)
	apiError(t, c.Put(ctx, "k1", "v", nodeapi.WriteID{}), http.StatusServiceUnavailable, "no leader")
	apiError(t, c.CAS(ctx, "k1", "a", "b", nodeapi.WriteID{}), http.StatusServiceUnavailable, "no leader")
	apiError(t, c.Delete(ctx, "k1"), http.StatusServiceUnavailable, "no leader")
	_, _, err = c.Get(ctx, "k1", false) // the event loop does not run: no read index in time
	apiError(t, err, http.StatusGatewayTimeout, "outcome unknown")
	_, found, err := c.Get(ctx, "k1", true)
	require.NoError(t, err)
	assert.False(t, found)
	_, err = c.SetClock(ctx, nodeapi.ClockFault{OffsetMS: 1})
	apiError(t, err, http.StatusForbidden, "--enable-fault-hooks")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := nodeapi.NewClient(ln.Addr().String(), nil)
	require.NoError(t, ln.Close())
	_, err = down.Status(ctx)
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "a transport error is the http.Client's: %v", err)
	var ae *nodeapi.Error
	assert.False(t, errors.As(err, &ae))
}

// TestClientUnreadableAnswers: answers that are not the API's JSON.
func TestClientUnreadableAnswers(t *testing.T) {
	ctx := t.Context()
	body, code := "", 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c := nodeapi.NewClient(strings.TrimPrefix(srv.URL, "http://"), nil)

	body, code = "<html>bad gateway</html>\n", http.StatusBadGateway
	err := c.Put(ctx, "k1", "v", nodeapi.WriteID{})
	assert.EqualError(t, err, "status 502: <html>bad gateway</html>")
	var ae *nodeapi.Error
	require.ErrorAs(t, err, &ae)
	assert.Error(t, ae.BodyErr)

	body, code = `{"value":null}`, http.StatusOK
	_, _, err = c.Get(ctx, "k1", false)
	assert.ErrorContains(t, err, `without a "value"`)
	body = `<html>`
	_, _, err = c.Get(ctx, "k1", false)
	assert.ErrorContains(t, err, "unreadable body")
	_, err = c.Status(ctx)
	assert.ErrorContains(t, err, "unreadable body")
}
