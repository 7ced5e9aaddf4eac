package workload

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
	"chaos/db/described"
	"chaos/history"
)

// fakeGateway answers etcd's v3 JSON gateway for the requests of
// examples/systems/etcd.yaml, from a map, and records every request.
type fakeGateway struct {
	mu       sync.Mutex
	kv       map[string]string
	requests []string
	// answer, when set, answers instead of the store.
	answer func(w http.ResponseWriter) bool
}

func (g *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	g.requests = append(g.requests, r.Method+" "+r.URL.Path+" "+string(body))
	if g.answer != nil && g.answer(w) {
		return
	}
	var req struct { // a txn
		Compare []struct{ Key, Value string }
		Success []struct {
			RequestPut struct{ Key, Value string } `json:"requestPut"`
		}
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	_ = json.Unmarshal(body, &req)
	str := func(k string) string { s, _ := raw[k].(string); return s }
	header := `"header":{"revision":"1"}`
	switch r.URL.Path {
	case "/v3/kv/put":
		g.kv[str("key")] = str("value")
		fmt.Fprintf(w, "{%s}", header)
	case "/v3/kv/range":
		var kvs []string
		for k, v := range g.kv {
			if k == str("key") || (str("range_end") != "" && k >= str("key") && k < str("range_end")) {
				kvs = append(kvs, fmt.Sprintf(`{"key":%q,"value":%q}`, k, v))
			}
		}
		if len(kvs) == 0 {
			fmt.Fprintf(w, "{%s}", header)
			return
		}
		fmt.Fprintf(w, `{%s,"kvs":[%s],"count":"%d"}`, header, strings.Join(kvs, ","), len(kvs))
	case "/v3/kv/txn":
		c, p := req.Compare[0], req.Success[0].RequestPut
		if g.kv[c.Key] != c.Value {
			fmt.Fprintf(w, "{%s}", header)
			return
		}
		g.kv[p.Key] = p.Value
		fmt.Fprintf(w, `{%s,"succeeded":true}`, header)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// etcdTemplateClient is a client made from examples/systems/etcd.yaml for
// a node at srv's address.
func etcdTemplateClient(t *testing.T, addr, readConsistency string) Client {
	t.Helper()
	desc, err := described.Load(filepath.Join("..", "examples", "systems", "etcd.yaml"))
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	desc.Ports.Client = atoi(t, port)
	n := db.Node{Name: "n1", Addr: host}
	d, err := described.New(desc, db.Config{Nodes: []db.Node{n}, Layout: db.DefaultLayout()})
	require.NoError(t, err)
	s, _ := described.From(d)
	c, err := NewDescribedClient(s, n, readConsistency)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func atoi(t *testing.T, s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}

// The etcd example's templates and rules against a fake gateway: every
// operation of both workloads, with the requests they send.
func TestHTTPTemplateClientAgainstEtcdExample(t *testing.T) {
	g := &fakeGateway{kv: map[string]string{}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := etcdTemplateClient(t, strings.TrimPrefix(srv.URL, "http://"), "serializable")
	ctx := context.Background()
	three := int64(3)

	assert.Equal(t, history.Outcome{Type: history.OK, Node: "n1", Value: (*int64)(nil)}, c.Do(ctx, Op{F: history.FRead, Key: "k1"}))
	assert.Equal(t, history.Outcome{Type: history.OK, Node: "n1"}, c.Do(ctx, Op{F: history.FWrite, Key: "k1", Value: int64(3)}))
	assert.Equal(t, history.Outcome{Type: history.OK, Node: "n1", Value: &three}, c.Do(ctx, Op{F: history.FRead, Key: "k1"}))
	out := c.Do(ctx, Op{F: history.FCAS, Key: "k1", Value: [2]int64{2, 4}})
	assert.Equal(t, history.Fail, out.Type)
	assert.Equal(t, `cas: HTTP 200: {"header":{"revision":"1"}} (answer rule 2)`, out.Error)
	assert.Equal(t, history.OK, c.Do(ctx, Op{F: history.FCAS, Key: "k1", Value: [2]int64{3, 4}}).Type)
	for _, v := range []int64{12, 10, 11} {
		assert.Equal(t, history.OK, c.Do(ctx, Op{F: history.FAdd, Value: v}).Type)
	}
	assert.Equal(t, history.Outcome{Type: history.OK, Node: "n1", Value: []int64{10, 11, 12}},
		c.Do(ctx, Op{F: history.FRead, Attempted: []int64{10, 11, 12, 13}}))

	assert.Equal(t, []string{
		`POST /v3/kv/range {"key":"` + b64("k1") + `","serializable":true}`,
		`POST /v3/kv/put {"key":"` + b64("k1") + `","value":"` + b64("3") + `"}`,
		`POST /v3/kv/range {"key":"` + b64("k1") + `","serializable":true}`,
		`POST /v3/kv/txn {"compare":[{"key":"` + b64("k1") + `","target":"VALUE","result":"EQUAL","value":"` + b64("2") + `"}], "success":[{"requestPut":{"key":"` + b64("k1") + `","value":"` + b64("4") + `"}}]}`,
	}, g.requests[:4])
	assert.Equal(t, `POST /v3/kv/put {"key":"`+b64("s12")+`","value":"`+b64("12")+`"}`, g.requests[5])
	assert.Equal(t, `POST /v3/kv/range {"key":"cw==","range_end":"dA==","serializable":true}`, g.requests[8])
}

// Answers the rules classify, and those they do not: never ok.
func TestHTTPTemplateClientClassifiesAnswers(t *testing.T) {
	g := &fakeGateway{kv: map[string]string{}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := etcdTemplateClient(t, strings.TrimPrefix(srv.URL, "http://"), "linearizable")
	ctx := context.Background()
	answer := func(status int, body string) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.answer = func(w http.ResponseWriter) bool {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return true
		}
	}
	write := Op{F: history.FWrite, Key: "k1", Value: int64(1)}
	read := Op{F: history.FRead, Key: "k1"}

	answer(503, `{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}`)
	out := c.Do(ctx, write)
	assert.Equal(t, history.Fail, out.Type)
	assert.True(t, out.Unavailable, "no leader: the worker backs off")

	answer(503, `{"error":"etcdserver: request timed out","message":"etcdserver: request timed out","code":14}`)
	out = c.Do(ctx, write)
	assert.Equal(t, history.Info, out.Type)
	assert.False(t, out.Unavailable)
	assert.Equal(t, `write: HTTP 503 matches no answer rule; outcome unknown: {"error":"etcdserver: request timed out","message":"etcdserver: request timed out","code":14}`, out.Error)

	answer(200, `not json`)
	assert.Equal(t, history.Info, c.Do(ctx, write).Type, "a 200 that is not etcd's answer is not ok")
	assert.Equal(t, history.Fail, c.Do(ctx, read).Type, "the read's catch-all rule says fail")

	answer(200, `{"header":{},"kvs":[{"key":"azE=","value":"`+b64("x")+`"}]}`)
	out = c.Do(ctx, read)
	assert.Equal(t, history.Info, out.Type)
	assert.Equal(t, `read: HTTP 200: value "x" is not a decimal integer (answer rule 1): {"header":{},"kvs":[{"key":"azE=","value":"eA=="}]}`, out.Error)
}

// A refused connection is fail and unavailable (nothing was sent); an
// answer that does not come before ctx ends is info.
func TestHTTPTemplateClientTransportFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	c := etcdTemplateClient(t, addr, "linearizable")
	out := c.Do(context.Background(), Op{F: history.FWrite, Key: "k1", Value: int64(1)})
	assert.Equal(t, history.Fail, out.Type)
	assert.True(t, out.Unavailable)
	assert.Contains(t, out.Error, "connection refused; not sent")

	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	c = etcdTemplateClient(t, strings.TrimPrefix(srv.URL, "http://"), "linearizable")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	out = c.Do(ctx, Op{F: history.FWrite, Key: "k1", Value: int64(1)})
	assert.Equal(t, history.Info, out.Type)
	assert.False(t, out.Unavailable)
	assert.Contains(t, out.Error, "context deadline exceeded; outcome unknown")
}

// classifyAnswer takes the first rule that matches; an answer none
// matches is info.
func TestClassifyAnswerRules(t *testing.T) {
	path := func(s string) described.Path {
		p, err := described.ParsePath(s)
		require.NoError(t, err)
		return p
	}
	yes := "yes"
	rules := []described.Rule{
		{Status: described.Statuses{409}, Type: "fail"},
		{Status: described.Statuses{200, 201}, Field: path("ok"), Equals: &yes, Type: "ok", Value: path("v")},
		{Field: path("err"), Contains: "leader", Type: "fail", Unavailable: true},
		{Contains: "maybe", Type: "info"},
	}
	cases := []struct {
		status int
		body   string
		want   history.Outcome
	}{
		{409, `{}`, history.Outcome{Type: history.Fail, Error: "read: HTTP 409: {} (answer rule 1)"}},
		{201, `{"ok":"yes","v":7}`, history.Outcome{Type: history.OK, Value: ptr(7)}},
		{200, `{"ok":"yes"}`, history.Outcome{Type: history.OK, Value: (*int64)(nil)}},
		{200, `{"ok":"no","v":7}`, history.Outcome{Type: history.Info, Error: `read: HTTP 200 matches no answer rule; outcome unknown: {"ok":"no","v":7}`}},
		{503, `{"err":"no leader here"}`, history.Outcome{Type: history.Fail, Unavailable: true, Error: `read: HTTP 503: {"err":"no leader here"} (answer rule 3)`}},
		{500, `it is maybe done`, history.Outcome{Type: history.Info, Error: "read: HTTP 500: it is maybe done (answer rule 4)"}},
		{500, ``, history.Outcome{Type: history.Info, Error: "read: HTTP 500 matches no answer rule; outcome unknown: "}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, classifyAnswer(described.OpRead, rules, c.status, []byte(c.body)), "%d %s", c.status, c.body)
	}
}
