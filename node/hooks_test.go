package node

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/node/nodeapi"
)

// newUnstartedServer builds a node of a three-member cluster without
// starting it: enough to exercise the HTTP handlers in-process.
func newUnstartedServer(t *testing.T, hooks bool) *Server {
	t.Helper()
	s, err := New(Config{Name: "n1", DataDir: t.TempDir(), ClientAddr: "127.0.0.1:0", PeerAddr: "127.0.0.1:0",
		Peers:             map[string]string{"n1": "127.0.0.1:1", "n2": "127.0.0.1:2", "n3": "127.0.0.1:3"},
		HeartbeatInterval: 10 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		RequestTimeout: time.Second, EnableFaultHooks: hooks, Seed: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Stop(context.Background())) })
	return s
}

func call(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "body %q", rec.Body.String())
	return rec.Code, out
}

func TestFaultHooksRefusedWhenDisabled(t *testing.T) {
	h := newUnstartedServer(t, false).routes()
	code, out := call(t, h, "POST", "/faults/partition", `{"drop":["n2"]}`)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, out["error"], "--enable-fault-hooks")
}

func TestFaultHooksRejectBadInput(t *testing.T) {
	h := newUnstartedServer(t, true).routes()
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/faults/partition", `{"drop":["n9"]}`, `unknown peer "n9"`},
		{"POST", "/faults/partition", `{"drop":["n1"]}`, `unknown peer "n1"`},
		{"POST", "/faults/partition", `{"drop":`, "malformed JSON"},
		{"POST", "/faults/partition", `{"dorp":["n2"]}`, "malformed JSON"},
		{"POST", "/faults/clock", `{"rate":-1}`, "rate"},
		{"POST", "/faults/net", `{"loss":2}`, "loss"},
		{"POST", "/faults/net", `{"peers":["nx"],"loss":0.1}`, `unknown peer "nx"`},
		{"POST", "/faults/net", `{"delay_ms":-5}`, "negative delay"},
		{"POST", "/faults/append", `{"max_bytes":-1}`, "malformed JSON"},
		{"POST", "/faults/append", `{"max_bytes":1,"max_inflight":-1}`, "malformed JSON"},
	} {
		code, out := call(t, h, c.method, c.path, c.body)
		require.Equal(t, http.StatusBadRequest, code, "%s %s %s", c.method, c.path, c.body)
		require.Contains(t, out["error"], c.want)
	}
}

func TestFaultHooksSetAndClear(t *testing.T) {
	s := newUnstartedServer(t, true)
	h := s.routes()
	code, out := call(t, h, "POST", "/faults/partition", `{"drop":["n3","n2"]}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []any{"n2", "n3"}, out["drop"])
	require.True(t, s.trans.Faults()[mustID(t, s, "n2")].Drop)

	code, _ = call(t, h, "POST", "/faults/net", `{"peers":["n2"],"loss":0.5,"delay_ms":20}`)
	require.Equal(t, http.StatusOK, code)
	f := s.trans.Faults()[mustID(t, s, "n2")]
	require.True(t, f.Drop, "message faults keep the partition")
	require.Equal(t, 0.5, f.Loss)
	require.Equal(t, 20*time.Millisecond, f.Delay)

	code, out = call(t, h, "POST", "/faults/clock", `{"offset_ms":1500,"rate":0.5}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]any{"offset_ms": 1500.0, "rate": 0.5}, out["clock"])

	code, out = call(t, h, "POST", "/faults/append", `{"max_bytes":1}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]any{"max_bytes": 1.0}, out["append"])
	require.Equal(t, nodeapi.AppendLimit{MaxBytes: 1}, s.appendLimitNow())
	code, out = call(t, h, "POST", "/faults/append", `{"max_bytes":1,"max_inflight":1}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]any{"max_bytes": 1.0, "max_inflight": 1.0}, out["append"])
	require.Equal(t, nodeapi.AppendLimit{MaxBytes: 1, MaxInflight: 1}, s.appendLimitNow())

	code, out = call(t, h, "DELETE", "/faults", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]any{"max_bytes": 0.0}, out["append"], "clearing every fault puts the append limit back")
	require.Empty(t, out["drop"])
	require.Empty(t, s.trans.Faults())
	require.Equal(t, map[string]any{"offset_ms": 0.0, "rate": 1.0}, out["clock"])
}

func mustID(t *testing.T, s *Server, name string) uint64 {
	t.Helper()
	id, ok := s.members.id(name)
	require.True(t, ok, name)
	return id
}
