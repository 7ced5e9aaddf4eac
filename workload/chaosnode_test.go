package workload

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
	"chaos/node/nodeapi"
)

// nodeStubRequest is one request a nodeStub received.
type nodeStubRequest struct {
	Method, Path string
	Query        string // the raw query, "" when none
	Body         map[string]any
}

// nodeStub is an HTTP server standing in for a chaos-node: handle answers
// every request, and every request is kept.
type nodeStub struct {
	srv   *httptest.Server
	conns atomic.Int64 // connections opened
	mu    sync.Mutex
	reqs  []nodeStubRequest
}

func newNodeStub(t *testing.T, handle http.HandlerFunc) *nodeStub {
	t.Helper()
	s := &nodeStub{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		req := nodeStubRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
		if len(raw) > 0 {
			assert.NoError(t, json.Unmarshal(raw, &req.Body), "request body %s", raw)
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		handle(w, r)
	}))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// answering returns a handler that always answers code with body.
func answering(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

func (s *nodeStub) requests() []nodeStubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]nodeStubRequest(nil), s.reqs...)
}

func (s *nodeStub) addr() string { return strings.TrimPrefix(s.srv.URL, "http://") }

func newTestChaosNodeClient(t *testing.T, addr string, opts ChaosNodeOptions) *ChaosNodeClient {
	t.Helper()
	c, err := NewChaosNodeClient("n3", addr, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var (
	opRead  = Op{F: history.FRead, Key: "k1"}
	opWrite = Op{F: history.FWrite, Key: "k1", Value: int64(7)}
	opCAS   = Op{F: history.FCAS, Key: "k1", Value: [2]int64{3, 8}}
	opAdd   = Op{F: history.FAdd, Value: int64(9)}
)

func ptr(v int64) *int64 { return &v }

func TestChaosNodeOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    Op
		code  int
		body  string
		want  history.Type
		value any
		err   string // a substring of the outcome's error
	}{
		{"read ok", opRead, 200, `{"value":"7"}`, history.OK, ptr(7), ""},
		{"read negative", opRead, 200, `{"value":"-12"}`, history.OK, ptr(-12), ""},
		{"read absent", opRead, 404, `{"error":"key not found"}`, history.OK, nil, ""},
		{"read no leader", opRead, 503, `{"error":"no leader"}`, history.Fail, nil, "status 503: no leader"},
		{"read timed out", opRead, 504, `{"error":"timed out; outcome unknown"}`, history.Fail, nil, "status 504"},
		{"read server error", opRead, 500, `{"error":"boom"}`, history.Fail, nil, "status 500: boom"},
		{"read bad request", opRead, 400, `{"error":"empty key"}`, history.Fail, nil, "status 400"},
		{"read garbage value", opRead, 200, `{"value":"seven"}`, history.Fail, nil, `"seven", not an integer`},
		{"read no value", opRead, 200, `{}`, history.Fail, nil, `without a "value"`},
		{"read null value", opRead, 200, `{"value":null}`, history.Fail, nil, `without a "value"`},
		{"read html", opRead, 200, `<html>`, history.Fail, nil, "unreadable body"},

		{"write ok", opWrite, 200, `{}`, history.OK, nil, ""},
		{"write no leader", opWrite, 503, `{"error":"no leader"}`, history.Fail, nil, "no leader"},
		{"write malformed", opWrite, 400, `{"error":"malformed JSON body"}`, history.Fail, nil, "a bug in chaos"},
		{"write too large", opWrite, 413, `{"error":"value over 1024 bytes"}`, history.Fail, nil, "refused: status 413"},
		{"write no route", opWrite, 404, `{"error":"no route"}`, history.Fail, nil, "refused: status 404"},
		{"write 409 makes no sense", opWrite, 409, `{"error":"?"}`, history.Info, nil, "outcome unknown"},
		{"write timed out", opWrite, 504, `{"error":"timed out; outcome unknown"}`, history.Info, nil, "status 504"},
		{"write server error", opWrite, 500, `{"error":"boom"}`, history.Info, nil, "status 500: boom"},
		{"write bad gateway", opWrite, 502, `<html>`, history.Info, nil, "status 502"},

		{"cas ok", opCAS, 200, `{}`, history.OK, nil, ""},
		{"cas mismatch", opCAS, 409, `{"error":"cas mismatch","value":"5"}`, history.Fail, nil, `cas mismatch: k1 is "5"`},
		{"cas on absent key", opCAS, 409, `{"error":"cas mismatch","value":null}`, history.Fail, nil, "k1 is absent"},
		{"cas mismatch garbled", opCAS, 409, `<html>`, history.Fail, nil, "k1 is unknown (unreadable body"},
		{"cas no leader", opCAS, 503, `{"error":"no leader"}`, history.Fail, nil, "no leader"},
		{"cas malformed", opCAS, 400, `{"error":"body needs"}`, history.Fail, nil, "a bug in chaos"},
		{"cas timed out", opCAS, 504, `{"error":"timed out"}`, history.Info, nil, "outcome unknown"},
		{"cas server error", opCAS, 500, `{"error":"boom"}`, history.Info, nil, "boom"},

		{"add ok", opAdd, 200, `{}`, history.OK, nil, ""},
		{"add no leader", opAdd, 503, `{"error":"no leader"}`, history.Fail, nil, "write s9: status 503"},
		{"add timed out", opAdd, 504, `{"error":"timed out"}`, history.Info, nil, "write s9: status 504"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub := newNodeStub(t, answering(tc.code, tc.body))
			c := newTestChaosNodeClient(t, stub.addr(), ChaosNodeOptions{})
			out := c.Do(t.Context(), tc.op)
			assert.Equal(t, tc.want, out.Type, "outcome %+v", out)
			if tc.code == http.StatusServiceUnavailable {
				assert.True(t, out.Unavailable, "a 503 makes the worker back off")
			} else {
				assert.False(t, out.Unavailable, "only refusals make the worker back off")
			}
			assert.Equal(t, tc.value, out.Value)
			assert.Equal(t, "n3", out.Node)
			if tc.err == "" {
				assert.Empty(t, out.Error)
			} else {
				assert.Contains(t, out.Error, tc.err)
			}
		})
	}
}

func TestChaosNodeRequests(t *testing.T) {
	stub := newNodeStub(t, answering(200, `{"value":"1"}`))
	c := newTestChaosNodeClient(t, stub.addr(), ChaosNodeOptions{ClientID: 77})
	for _, op := range []Op{opRead, opWrite, opCAS, opAdd} {
		require.Equal(t, history.OK, c.Do(t.Context(), op).Type)
	}
	assert.Equal(t, []nodeStubRequest{
		{Method: "GET", Path: "/kv/k1"},
		{Method: "PUT", Path: "/kv/k1", Body: map[string]any{"value": "7", "client": 77.0, "seq": 1.0}},
		{Method: "POST", Path: "/kv/k1/cas", Body: map[string]any{"from": "3", "to": "8", "client": 77.0, "seq": 2.0}},
		{Method: "PUT", Path: "/kv/s9", Body: map[string]any{"value": "1", "client": 77.0, "seq": 3.0}},
	}, stub.requests())
}

// StaleReads makes every read, the register's and the set's final one, a
// ?stale=true GET; writes are as they were.
func TestChaosNodeStaleReads(t *testing.T) {
	stub := newNodeStub(t, answering(200, `{"value":"1"}`))
	c := newTestChaosNodeClient(t, stub.addr(), ChaosNodeOptions{ClientID: 77, StaleReads: true})
	for _, op := range []Op{opRead, opWrite, {F: history.FRead, Attempted: []int64{4}}} {
		require.Equal(t, history.OK, c.Do(t.Context(), op).Type)
	}
	assert.Equal(t, []nodeStubRequest{
		{Method: "GET", Path: "/kv/k1", Query: "stale=true"},
		{Method: "PUT", Path: "/kv/k1", Body: map[string]any{"value": "7", "client": 77.0, "seq": 1.0}},
		{Method: "GET", Path: "/kv/s4", Query: "stale=true"},
	}, stub.requests())
}

func TestChaosNodeRandomClientIDs(t *testing.T) {
	a := newTestChaosNodeClient(t, "127.0.0.1:1", ChaosNodeOptions{})
	b := newTestChaosNodeClient(t, "127.0.0.1:1", ChaosNodeOptions{})
	assert.NotZero(t, a.id)
	assert.NotEqual(t, a.id, b.id)
}

func TestChaosNodeKeepsOneConnection(t *testing.T) {
	stub := newNodeStub(t, answering(200, `{"value":"1"}`))
	c := newTestChaosNodeClient(t, stub.addr(), ChaosNodeOptions{})
	for range 20 {
		require.Equal(t, history.OK, c.Do(t.Context(), opWrite).Type)
		require.Equal(t, history.OK, c.Do(t.Context(), opRead).Type)
	}
	assert.EqualValues(t, 1, stub.conns.Load())
}

func TestChaosNodeRejectsOpsItCannotSend(t *testing.T) {
	stub := newNodeStub(t, answering(200, `{}`))
	c := newTestChaosNodeClient(t, stub.addr(), ChaosNodeOptions{})
	for _, op := range []Op{
		{F: history.FWrite, Key: "k1", Value: 7}, // int, not int64
		{F: history.FCAS, Key: "k1", Value: []int64{1, 2}},
		{F: history.FRead, Key: "k1", Value: int64(1)},
		{F: "delete", Key: "k1"},
	} {
		out := c.Do(t.Context(), op)
		assert.Equal(t, history.Fail, out.Type, "%+v", op)
		assert.Contains(t, out.Error, "a bug in chaos")
		assert.Equal(t, "n3", out.Node)
	}
	assert.Empty(t, stub.requests(), "nothing was sent")
}

func TestNewChaosNodeClientChecksItsArguments(t *testing.T) {
	_, err := NewChaosNodeClient("n1", "no-port", ChaosNodeOptions{})
	assert.ErrorContains(t, err, `address "no-port"`)
	_, err = NewChaosNodeClient("n1", "127.0.0.1:7000", ChaosNodeOptions{ReadConcurrency: -1})
	assert.ErrorContains(t, err, "read concurrency -1")
}

// TestChaosNodeInterrupted: a request whose ctx ends after it was sent is
// info if it writes, fail if it reads.
func TestChaosNodeInterrupted(t *testing.T) {
	for op, want := range map[*Op]history.Type{&opRead: history.Fail, &opWrite: history.Info,
		&opCAS: history.Info, &opAdd: history.Info} {
		entered := make(chan struct{})
		stub := newNodeStub(t, func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			<-r.Context().Done() // the client gave up
		})
		c := newTestChaosNodeClient(t, stub.addr(), ChaosNodeOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-entered
			cancel()
		}()
		out := c.Do(ctx, *op)
		assert.Equal(t, want, out.Type, "%s: %+v", op.F, out)
		assert.Contains(t, out.Error, "context canceled")
		assert.Equal(t, "n3", out.Node)
	}
}

// TestChaosNodeConnectionLost: the node closes the connection without an
// answer after reading the request.
func TestChaosNodeConnectionLost(t *testing.T) {
	stub := newNodeStub(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if assert.NoError(t, err) {
			_ = conn.Close()
		}
	})
	c := newTestChaosNodeClient(t, stub.addr(), ChaosNodeOptions{})
	assert.Equal(t, history.Fail, c.Do(t.Context(), opRead).Type)
	out := c.Do(t.Context(), opWrite)
	assert.Equal(t, history.Info, out.Type)
	assert.Contains(t, out.Error, "outcome unknown")
}

// TestChaosNodeConnectionRefused: nothing listens. No connection was ever
// made, so the write certainly did not happen: fail, not info.
func TestChaosNodeConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c := newTestChaosNodeClient(t, addr, ChaosNodeOptions{})
	read := c.Do(t.Context(), opRead)
	assert.Equal(t, history.Fail, read.Type)
	assert.Contains(t, read.Error, "connection refused")
	write := c.Do(t.Context(), opWrite)
	assert.Equal(t, history.Fail, write.Type)
	assert.Contains(t, write.Error, "connection refused")
	assert.Contains(t, write.Error, "not sent")
	assert.True(t, read.Unavailable && write.Unavailable, "each refused connection makes the worker back off")
}

// TestUnknownWriteOutcomeSaysSoOnce: an answer that leaves a write's
// outcome unknown is Info, and its error says so once, whether or not the
// node's message said it already.
func TestUnknownWriteOutcomeSaysSoOnce(t *testing.T) {
	for _, ae := range []*nodeapi.Error{
		{Status: http.StatusGatewayTimeout, Message: "timed out; outcome unknown"},
		{Status: http.StatusInternalServerError, Message: "disk on fire"},
	} {
		out := writeFailure("write k", ae)
		require.Equal(t, history.Info, out.Type)
		require.Equal(t, 1, strings.Count(out.Error, "outcome unknown"), out.Error)
		require.True(t, strings.HasPrefix(out.Error, "write k: status "), out.Error)
	}
}
