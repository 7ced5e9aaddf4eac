package workload

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chaos/history"
)

// etcdB64 is how the gateway wants keys and values.
func etcdB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// etcdOKHeader is the header every real etcd answer carries.
const etcdOKHeader = `"header":{"cluster_id":"1","member_id":"2","revision":"7","raft_term":"2"}`

// etcdSeen is one request a fake gateway received.
type etcdSeen struct {
	Method, Path, ContentType string
	Body                      []byte
}

// etcdFakeGateway serves status and body to every request and records what
// it received.
type etcdFakeGateway struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []etcdSeen
}

func newEtcdFakeGateway(t *testing.T, status int, body string) *etcdFakeGateway {
	t.Helper()
	g := &etcdFakeGateway{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.seen = append(g.seen, etcdSeen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), b})
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *etcdFakeGateway) requests() []etcdSeen {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]etcdSeen(nil), g.seen...)
}

func newTestEtcdClient(t *testing.T, endpoint string, opts EtcdOptions) *EtcdClient {
	t.Helper()
	c, err := NewEtcdClient("n1", endpoint, opts)
	if err != nil {
		t.Fatalf("NewEtcdClient: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// etcdJSONEqual compares two JSON texts by meaning.
func etcdJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body %s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request body\n got %s\nwant %s", got, want)
	}
}

func TestEtcdRequestBodies(t *testing.T) {
	casBody := fmt.Sprintf(`{"compare":[{"key":%q,"target":"VALUE","result":"EQUAL","value":%q}],`+
		`"success":[{"requestPut":{"key":%q,"value":%q}}]}`,
		etcdB64("chaos/k1"), etcdB64("5"), etcdB64("chaos/k1"), etcdB64("-6"))
	tests := []struct {
		name     string
		opts     EtcdOptions
		op       Op
		path     string
		wantBody string
	}{
		{"linearizable read", EtcdOptions{}, Op{F: history.FRead, Key: "k1"}, "/v3/kv/range",
			fmt.Sprintf(`{"key":%q,"serializable":false}`, etcdB64("chaos/k1"))},
		{"serializable read, own prefix", EtcdOptions{Serializable: true, KeyPrefix: "p/"}, Op{F: history.FRead, Key: "k1"},
			"/v3/kv/range", fmt.Sprintf(`{"key":%q,"serializable":true}`, etcdB64("p/k1"))},
		{"write", EtcdOptions{}, Op{F: history.FWrite, Key: "k1", Value: int64(42)}, "/v3/kv/put",
			fmt.Sprintf(`{"key":%q,"value":%q}`, etcdB64("chaos/k1"), etcdB64("42"))},
		{"cas", EtcdOptions{}, Op{F: history.FCAS, Key: "k1", Value: [2]int64{5, -6}}, "/v3/kv/txn", casBody},
		{"add", EtcdOptions{}, Op{F: history.FAdd, Value: int64(7)}, "/v3/kv/put",
			fmt.Sprintf(`{"key":%q,"value":%q}`, etcdB64("chaos/set/7"), etcdB64("7"))},
		{"set read", EtcdOptions{}, Op{F: history.FRead}, "/v3/kv/range",
			fmt.Sprintf(`{"key":%q,"range_end":%q,"serializable":false}`, etcdB64("chaos/set/"), etcdB64("chaos/set0"))},
		{"serializable set read", EtcdOptions{Serializable: true}, Op{F: history.FRead}, "/v3/kv/range",
			fmt.Sprintf(`{"key":%q,"range_end":%q,"serializable":true}`, etcdB64("chaos/set/"), etcdB64("chaos/set0"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newEtcdFakeGateway(t, http.StatusOK, "{"+etcdOKHeader+"}")
			c := newTestEtcdClient(t, g.srv.URL, tt.opts)
			c.Do(context.Background(), tt.op)
			reqs := g.requests()
			if len(reqs) != 1 {
				t.Fatalf("gateway got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != tt.path || r.ContentType != "application/json" {
				t.Errorf("request %s %s (%s), want POST %s (application/json)", r.Method, r.Path, r.ContentType, tt.path)
			}
			etcdJSONEqual(t, r.Body, tt.wantBody)
		})
	}
}

// etcdKV is one kvs entry of a range answer holding value.
func etcdKV(key, value string) string {
	return fmt.Sprintf(`{"key":%q,"create_revision":"2","mod_revision":"2","version":"1","value":%q}`,
		etcdB64(key), etcdB64(value))
}

func etcdErrBody(code int, msg string) string {
	return fmt.Sprintf(`{"error":%q,"message":%q,"code":%d}`, msg, msg, code)
}

func TestEtcdOutcomes(t *testing.T) {
	var (
		read    = Op{F: history.FRead, Key: "k1"}
		write   = Op{F: history.FWrite, Key: "k1", Value: int64(42)}
		cas     = Op{F: history.FCAS, Key: "k1", Value: [2]int64{5, 6}}
		add     = Op{F: history.FAdd, Value: int64(7)}
		setRead = Op{F: history.FRead}
		five    = int64(5)
		ok      = "{" + etcdOKHeader + "}"
	)
	tests := []struct {
		name      string
		op        Op
		status    int
		body      string
		wantType  history.Type
		wantValue any
		wantErr   string // a substring of the outcome's Error; "" means none
	}{
		{"read absent", read, 200, ok, history.OK, (*int64)(nil), ""},
		{"read present", read, 200, `{` + etcdOKHeader + `,"kvs":[` + etcdKV("chaos/k1", "5") + `],"count":"1"}`,
			history.OK, &five, ""},
		{"read non-integer", read, 200, `{` + etcdOKHeader + `,"kvs":[` + etcdKV("chaos/k1", "abc") + `]}`,
			history.Fail, nil, `key "chaos/k1" holds "abc", not a decimal integer`},
		{"read omitted (empty) value", read, 200, `{` + etcdOKHeader + `,"kvs":[{"key":"` + etcdB64("chaos/k1") + `"}]}`,
			history.Fail, nil, `holds "", not a decimal integer`},
		{"read other key", read, 200, `{` + etcdOKHeader + `,"kvs":[` + etcdKV("chaos/k2", "5") + `]}`,
			history.Fail, nil, "answer holds 1 keys"},
		{"read garbage", read, 200, `<html>`, history.Fail, nil, "decode answer"},
		{"read without header", read, 200, `{}`, history.Fail, nil, "no header"},
		{"read timed out", read, 503, etcdErrBody(14, "etcdserver: request timed out"),
			history.Fail, nil, "etcdserver: request timed out"},
		{"read leader changed", read, 503, etcdErrBody(14, "etcdserver: leader changed"),
			history.Fail, nil, "leader changed"},

		{"write ok", write, 200, ok, history.OK, int64(42), ""},
		{"write garbage 200", write, 200, `not json`, history.Info, int64(42), "decode answer"},
		{"write 200 without header", write, 200, `{}`, history.Info, int64(42), "no header"},
		{"write timed out", write, 503, etcdErrBody(14, "etcdserver: request timed out"),
			history.Info, int64(42), "HTTP 503: etcdserver: request timed out (gRPC code 14)"},
		{"write timed out, leader fail", write, 503,
			etcdErrBody(14, "etcdserver: request timed out, possibly due to previous leader failure"), history.Info, int64(42), "leader failure"},
		{"write timed out, connection lost", write, 503,
			etcdErrBody(14, "etcdserver: request timed out, possibly due to connection lost"), history.Info, int64(42), "connection lost"},
		{"write leader changed", write, 503, etcdErrBody(14, "etcdserver: leader changed"), history.Info, int64(42), "leader changed"},
		{"write server stopped", write, 503, etcdErrBody(14, "etcdserver: server stopped"), history.Info, int64(42), "stopped"},
		{"write transport error", write, 503, etcdErrBody(14, "transport is closing"), history.Info, int64(42), "closing"},
		{"write deadline exceeded", write, 504, etcdErrBody(4, "context deadline exceeded"), history.Info, int64(42), "deadline"},
		{"write canceled", write, 408, etcdErrBody(1, "context canceled"), history.Info, int64(42), "canceled"},
		{"write raft stopped", write, 500, etcdErrBody(2, "raft: stopped"), history.Info, int64(42), "raft: stopped"},
		{"write message too large to receive", write, 429, etcdErrBody(8, "grpc: received message larger than max"),
			history.Info, int64(42), "larger than max"},
		{"write too many requests", write, 500, etcdErrBody(2, "etcdserver: too many requests"),
			history.Fail, int64(42), "too many requests"},
		{"write proposal dropped", write, 500, etcdErrBody(2, "raft proposal dropped"), history.Fail, int64(42), "dropped"},
		{"write no leader", write, 503, etcdErrBody(14, "etcdserver: no leader"), history.Fail, int64(42), "no leader"},
		{"write not capable", write, 503, etcdErrBody(14, "etcdserver: not capable"), history.Fail, int64(42), "not capable"},
		{"write no space", write, 429, etcdErrBody(8, "etcdserver: mvcc: database space exceeded"),
			history.Fail, int64(42), "space exceeded"},
		{"write too large", write, 400, etcdErrBody(3, "etcdserver: request is too large"), history.Fail, int64(42), "too large"},
		{"write permission denied", write, 403, etcdErrBody(7, "etcdserver: permission denied"), history.Fail, int64(42), "denied"},
		{"write invalid token", write, 401, etcdErrBody(16, "etcdserver: invalid auth token"), history.Fail, int64(42), "token"},
		{"write 3.5 body, refused", write, 400, `{"code":3,"message":"etcdserver: key is not provided","details":[]}`,
			history.Fail, int64(42), "key is not provided (gRPC code 3)"},
		{"write 3.5 body, timed out", write, 503, `{"code":14,"message":"etcdserver: request timed out","details":[]}`,
			history.Info, int64(42), "timed out"},
		{"write 404 not a gateway", write, 404, "404 page not found\n", history.Fail, int64(42), "HTTP 404: 404 page not found"},
		{"write 502 from a proxy", write, 502, "<html>bad gateway</html>", history.Info, int64(42), "HTTP 502"},
		{"write 408 without code", write, 408, "timeout", history.Info, int64(42), "HTTP 408"},

		{"cas succeeded", cas, 200, `{` + etcdOKHeader + `,"succeeded":true,"responses":[{"response_put":{"header":{"revision":"8"}}}]}`,
			history.OK, [2]int64{5, 6}, ""},
		{"cas mismatch, succeeded omitted", cas, 200, ok, history.Fail, [2]int64{5, 6}, "cas mismatch"},
		{"cas mismatch, succeeded false", cas, 200, `{` + etcdOKHeader + `,"succeeded":false}`,
			history.Fail, [2]int64{5, 6}, "cas mismatch"},
		{"cas garbage", cas, 200, `{"succeeded":`, history.Info, [2]int64{5, 6}, "decode answer"},
		{"cas without header", cas, 200, `{"succeeded":true}`, history.Info, [2]int64{5, 6}, "no header"},
		{"cas timed out", cas, 503, etcdErrBody(14, "etcdserver: request timed out"), history.Info, [2]int64{5, 6}, "timed out"},
		{"cas refused", cas, 400, etcdErrBody(3, "etcdserver: duplicate key given in txn request"),
			history.Fail, [2]int64{5, 6}, "duplicate key"},

		{"add ok", add, 200, ok, history.OK, int64(7), ""},
		{"add timed out", add, 503, etcdErrBody(14, "etcdserver: request timed out"), history.Info, int64(7), "timed out"},
		{"add refused", add, 500, etcdErrBody(2, "etcdserver: too many requests"), history.Fail, int64(7), "too many"},

		{"set read", setRead, 200, `{` + etcdOKHeader + `,"kvs":[` + etcdKV("chaos/set/3", "3") + "," +
			etcdKV("chaos/set/10", "10") + "," + etcdKV("chaos/set/-1", "-1") + `],"count":"3"}`,
			history.OK, []int64{-1, 3, 10}, ""},
		{"set read empty", setRead, 200, ok, history.OK, []int64{}, ""},
		{"set read non-integer", setRead, 200, `{` + etcdOKHeader + `,"kvs":[` + etcdKV("chaos/set/3", "3") + "," +
			etcdKV("chaos/set/x", "x") + `]}`, history.Fail, nil, `key "chaos/set/x" holds "x", not a decimal integer`},
		{"set read timed out", setRead, 503, etcdErrBody(14, "etcdserver: request timed out"), history.Fail, nil, "timed out"},
		{"set read garbage", setRead, 200, `[]`, history.Fail, nil, "decode answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newEtcdFakeGateway(t, tt.status, tt.body)
			c := newTestEtcdClient(t, g.srv.URL, EtcdOptions{})
			got := c.Do(context.Background(), tt.op)
			etcdCheckOutcome(t, got, tt.wantType, tt.wantValue, tt.wantErr)
		})
	}
}

// etcdCheckOutcome checks type, node, value and error of an outcome.
func etcdCheckOutcome(t *testing.T, got history.Outcome, wantType history.Type, wantValue any, wantErr string) {
	t.Helper()
	if got.Type != wantType || got.Node != "n1" {
		t.Errorf("outcome %v on node %q (error %q), want %v on n1", got.Type, got.Node, got.Error, wantType)
	}
	if !reflect.DeepEqual(got.Value, wantValue) {
		t.Errorf("value %#v, want %#v", got.Value, wantValue)
	}
	if wantErr == "" && got.Error != "" {
		t.Errorf("error %q, want none", got.Error)
	}
	if !strings.Contains(got.Error, wantErr) {
		t.Errorf("error %q, want it to contain %q", got.Error, wantErr)
	}
}

// The set's final read of nothing must record [], never null: the set
// checker refuses a final read without a list.
func TestEtcdEmptySetReadRecordsAList(t *testing.T) {
	g := newEtcdFakeGateway(t, 200, "{"+etcdOKHeader+"}")
	c := newTestEtcdClient(t, g.srv.URL, EtcdOptions{})
	o := c.Do(context.Background(), Op{F: history.FRead})
	rec := history.NewRecorder(nil, func() time.Duration { return 0 }, history.RecorderOptions{})
	p, err := rec.Invoke(0, history.FRead, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Complete(p, o); err != nil {
		t.Fatal(err)
	}
	if got := string(rec.Ops()[1].Value); got != "[]" {
		t.Errorf("recorded value %q, want []", got)
	}
}

func TestEtcdBadOpsSendNothing(t *testing.T) {
	tests := []struct {
		name, wantErr string
		op            Op
	}{
		{"write of a string", "want an int64", Op{F: history.FWrite, Key: "k1", Value: "42"}},
		{"cas of a slice", "want [2]int64", Op{F: history.FCAS, Key: "k1", Value: []int64{1, 2}}},
		{"add of nothing", "want an int64", Op{F: history.FAdd}},
		{"unknown f", `unknown operation "delete"`, Op{F: "delete", Key: "k1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newEtcdFakeGateway(t, 200, "{"+etcdOKHeader+"}")
			c := newTestEtcdClient(t, g.srv.URL, EtcdOptions{})
			o := c.Do(context.Background(), tt.op)
			if o.Type != history.Fail || o.Node != "n1" || !strings.Contains(o.Error, tt.wantErr) {
				t.Errorf("outcome %v on %q, error %q; want fail on n1 with %q", o.Type, o.Node, o.Error, tt.wantErr)
			}
			if n := len(g.requests()); n != 0 {
				t.Errorf("gateway got %d requests, want none", n)
			}
		})
	}
}

// etcdOpsAndLostOutcome lists one op of each kind with the outcome it must
// have when its answer is lost: unknown for changes, fail for reads.
func etcdOpsAndLostOutcome() []etcdOpAndOutcome {
	return []etcdOpAndOutcome{
		{Op{F: history.FRead, Key: "k1"}, history.Fail},
		{Op{F: history.FWrite, Key: "k1", Value: int64(1)}, history.Info},
		{Op{F: history.FCAS, Key: "k1", Value: [2]int64{1, 2}}, history.Info},
		{Op{F: history.FAdd, Value: int64(3)}, history.Info},
		{Op{F: history.FRead}, history.Fail},
	}
}

type etcdOpAndOutcome struct {
	op   Op
	want history.Type
}

// A request that reached the gateway and whose answer never came (ctx ended
// while etcd was working on it) may have been applied.
func TestEtcdContextEndsAfterSending(t *testing.T) {
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a closed connection only after the body
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	c := newTestEtcdClient(t, srv.URL, EtcdOptions{})
	for _, tt := range etcdOpsAndLostOutcome() {
		// The timeout only bounds a broken test; the cancel after arrival
		// is what ends a correct one.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		go func() {
			select {
			case <-arrived:
				cancel()
			case <-ctx.Done():
			}
		}()
		o := c.Do(ctx, tt.op)
		cancel()
		if o.Type != tt.want || o.Node != "n1" || !strings.Contains(o.Error, "context canceled") {
			t.Errorf("%s %q: outcome %v on %q, error %q; want %v on n1, context canceled",
				tt.op.F, tt.op.Key, o.Type, o.Node, o.Error, tt.want)
		}
	}
}

// A deadline that passes while etcd works: unknown for changes, fail for
// reads, whether or not the request got out before the deadline.
func TestEtcdDeadlinePasses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	c := newTestEtcdClient(t, srv.URL, EtcdOptions{})
	for _, tt := range etcdOpsAndLostOutcome() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		o := c.Do(ctx, tt.op)
		cancel()
		if o.Type != tt.want || !strings.Contains(o.Error, "deadline exceeded") {
			t.Errorf("%s %q: outcome %v, error %q; want %v, deadline exceeded", tt.op.F, tt.op.Key, o.Type, o.Error, tt.want)
		}
	}
}

// A connection cut after the request was read: unknown for changes.
func TestEtcdConnectionLostAfterSending(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	c := newTestEtcdClient(t, srv.URL, EtcdOptions{})
	for _, tt := range etcdOpsAndLostOutcome() {
		o := c.Do(context.Background(), tt.op)
		if o.Type != tt.want || !strings.Contains(o.Error, "EOF") {
			t.Errorf("%s %q: outcome %v, error %q; want %v, EOF", tt.op.F, tt.op.Key, o.Type, o.Error, tt.want)
		}
	}
}

// Nothing listens: no byte was sent, so every op certainly did not happen.
func TestEtcdConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newTestEtcdClient(t, addr, EtcdOptions{})
	for _, tt := range etcdOpsAndLostOutcome() {
		o := c.Do(context.Background(), tt.op)
		if o.Type != history.Fail || !strings.Contains(o.Error, "connection refused") {
			t.Errorf("%s %q: outcome %v, error %q; want fail, connection refused", tt.op.F, tt.op.Key, o.Type, o.Error)
		}
		if !o.Unavailable {
			t.Errorf("%s %q: a refused connection is not Unavailable", tt.op.F, tt.op.Key)
		}
	}
}

// The client's own HTTP client keeps one connection alive across requests.
func TestEtcdKeepsConnectionAlive(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		io.WriteString(w, "{"+etcdOKHeader+"}")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := newTestEtcdClient(t, srv.URL, EtcdOptions{})
	for i := range 10 {
		if o := c.Do(context.Background(), Op{F: history.FWrite, Key: "k", Value: int64(i)}); o.Type != history.OK {
			t.Fatalf("write %d: %v %s", i, o.Type, o.Error)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("10 requests opened %d connections, want 1", n)
	}
}

type etcdCountingTransport struct{ n atomic.Int32 }

func (t *etcdCountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestEtcdUsesGivenHTTPClient(t *testing.T) {
	g := newEtcdFakeGateway(t, 200, "{"+etcdOKHeader+"}")
	tr := &etcdCountingTransport{}
	c := newTestEtcdClient(t, g.srv.URL, EtcdOptions{HTTPClient: &http.Client{Transport: tr}})
	if o := c.Do(context.Background(), Op{F: history.FRead, Key: "k"}); o.Type != history.OK {
		t.Fatalf("read: %v %s", o.Type, o.Error)
	}
	if n := tr.n.Load(); n != 1 {
		t.Errorf("given transport carried %d requests, want 1", n)
	}
}

func TestEtcdEndpoints(t *testing.T) {
	good := map[string]string{
		"127.0.0.1:2379":           "http://127.0.0.1:2379/v3",
		"http://127.0.0.1:2379/":   "http://127.0.0.1:2379/v3",
		"https://e1:2379":          "https://e1:2379/v3",
		"http://proxy:80/etcd/e1/": "http://proxy:80/etcd/e1/v3",
	}
	for endpoint, want := range good {
		c, err := NewEtcdClient("n1", endpoint, EtcdOptions{})
		if err != nil {
			t.Errorf("NewEtcdClient(%q): %v", endpoint, err)
		} else if c.base != want {
			t.Errorf("NewEtcdClient(%q): base %q, want %q", endpoint, c.base, want)
		}
	}
	for _, endpoint := range []string{"ftp://e1:2379", "http://", "http://e1:2379?x=1", "http://u:p@e1:2379", "http://e1:%zz"} {
		if _, err := NewEtcdClient("n1", endpoint, EtcdOptions{}); err == nil || !strings.Contains(err.Error(), "n1") {
			t.Errorf("NewEtcdClient(%q): error %v, want one naming n1", endpoint, err)
		}
	}
}

func TestEtcdPrefixEnd(t *testing.T) {
	tests := map[string]string{
		"chaos/set/": "chaos/set0",
		"a":          "b",
		"a\xff":      "b",
		"a\xfe\xff":  "a\xff",
		"\xff\xff":   "\x00",
		"":           "\x00",
	}
	for p, want := range tests {
		in := []byte(p)
		if got := etcdPrefixEnd(in); !bytes.Equal(got, []byte(want)) {
			t.Errorf("etcdPrefixEnd(%q) = %q, want %q", p, got, want)
		}
		if string(in) != p {
			t.Errorf("etcdPrefixEnd(%q) modified its argument to %q", p, in)
		}
	}
}

// The single etcd member TestEtcdRealServer starts, on its own loopback
// address so that it meets no other test's ports.
const (
	etcdRealClientURL = "http://127.0.0.41:23790"
	etcdRealPeerURL   = "http://127.0.0.41:23800"
)

// etcdRealStart starts a one-member etcd in a temporary directory, waits
// until its v3 gateway answers POST /v3/kv/range (which also checks the
// gateway path on the real binary), and kills it when the test ends. It
// skips the test when there is no etcd binary, except in CI (CI=true),
// where a missing prerequisite must fail.
func etcdRealStart(t *testing.T) {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("etcd is not installed (apt-get install etcd-server; test.sh does it): %v", err)
		}
		t.Skipf("etcd is not installed (apt-get install etcd-server): %v", err)
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "etcd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--name", "e1", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", etcdRealClientURL, "--advertise-client-urls", etcdRealClientURL,
		"--listen-peer-urls", etcdRealPeerURL, "--initial-advertise-peer-urls", etcdRealPeerURL,
		"--initial-cluster", "e1="+etcdRealPeerURL)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = etcdRealEnv()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("etcd log:\n%s", out)
		}
	})
	etcdRealWaitReady(t, exited, logPath)
}

// etcdRealEnv is this process's environment without ETCD_* variables, which
// etcd would read as flags, plus ETCD_UNSUPPORTED_ARCH on architectures
// etcd 3.4 refuses to run on without it.
func etcdRealEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			env = append(env, kv)
		}
	}
	switch runtime.GOARCH {
	case "amd64", "arm64", "ppc64le", "s390x":
	default:
		env = append(env, "ETCD_UNSUPPORTED_ARCH="+runtime.GOARCH)
	}
	return env
}

// etcdRealWaitReady polls the gateway until it answers a range with 200, for
// at most 30 seconds, failing at once if etcd exits.
func etcdRealWaitReady(t *testing.T, exited <-chan error, logPath string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	body := fmt.Sprintf(`{"key":%q}`, etcdB64("ready"))
	var last string
	for {
		resp, err := http.Post(etcdRealClientURL+"/v3/kv/range", "application/json", strings.NewReader(body))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logPath)
			t.Fatalf("etcd exited before answering (%v):\n%s", err, out)
		case <-deadline:
			t.Fatalf("etcd's gateway did not answer POST /v3/kv/range within 30s; last: %s", last)
		case <-tick.C:
		}
	}
}

func TestEtcdRealServer(t *testing.T) {
	etcdRealStart(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newTestEtcdClient(t, etcdRealClientURL, EtcdOptions{})
	serial := newTestEtcdClient(t, etcdRealClientURL, EtcdOptions{Serializable: true})
	i64 := func(v int64) *int64 { return &v }
	steps := []struct {
		name      string
		c         *EtcdClient
		op        Op
		wantType  history.Type
		wantValue any
		wantErr   string
	}{
		{"read absent", c, Op{F: history.FRead, Key: "k1"}, history.OK, (*int64)(nil), ""},
		{"write", c, Op{F: history.FWrite, Key: "k1", Value: int64(5)}, history.OK, int64(5), ""},
		{"read written", c, Op{F: history.FRead, Key: "k1"}, history.OK, i64(5), ""},
		{"cas success", c, Op{F: history.FCAS, Key: "k1", Value: [2]int64{5, 6}}, history.OK, [2]int64{5, 6}, ""},
		{"read after cas", c, Op{F: history.FRead, Key: "k1"}, history.OK, i64(6), ""},
		{"cas mismatch", c, Op{F: history.FCAS, Key: "k1", Value: [2]int64{5, 7}}, history.Fail, [2]int64{5, 7}, "cas mismatch"},
		{"read after mismatch", c, Op{F: history.FRead, Key: "k1"}, history.OK, i64(6), ""},
		{"cas on absent key", c, Op{F: history.FCAS, Key: "k2", Value: [2]int64{0, 1}}, history.Fail, [2]int64{0, 1}, "cas mismatch"},
		{"absent key stays absent", c, Op{F: history.FRead, Key: "k2"}, history.OK, (*int64)(nil), ""},
		{"serializable read", serial, Op{F: history.FRead, Key: "k1"}, history.OK, i64(6), ""},
		{"serializable read absent", serial, Op{F: history.FRead, Key: "k2"}, history.OK, (*int64)(nil), ""},
		{"empty set", c, Op{F: history.FRead}, history.OK, []int64{}, ""},
		{"add 30", c, Op{F: history.FAdd, Value: int64(30)}, history.OK, int64(30), ""},
		{"add -2", c, Op{F: history.FAdd, Value: int64(-2)}, history.OK, int64(-2), ""},
		{"add 4", c, Op{F: history.FAdd, Value: int64(4)}, history.OK, int64(4), ""},
		{"final read", c, Op{F: history.FRead}, history.OK, []int64{-2, 4, 30}, ""},
		{"serializable final read", serial, Op{F: history.FRead}, history.OK, []int64{-2, 4, 30}, ""},
	}
	for _, s := range steps {
		o := s.c.Do(ctx, s.op)
		t.Run(s.name, func(t *testing.T) { etcdCheckOutcome(t, o, s.wantType, s.wantValue, s.wantErr) })
	}
	etcdRealCheckErrors(t, ctx, c)
}

// etcdRealCheckErrors checks the client against what the real etcd says in
// the cases it cannot provoke through Client ops: a value that is not an
// integer, and the shape of a gRPC error body.
func etcdRealCheckErrors(t *testing.T, ctx context.Context, c *EtcdClient) {
	put := fmt.Sprintf(`{"key":%q,"value":%q}`, etcdB64("chaos/bad"), etcdB64("abc"))
	resp, err := http.Post(etcdRealClientURL+"/v3/kv/put", "application/json", strings.NewReader(put))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	o := c.Do(ctx, Op{F: history.FRead, Key: "bad"})
	etcdCheckOutcome(t, o, history.Fail, nil, `key "chaos/bad" holds "abc", not a decimal integer`)

	// A put without a key: etcd refuses it before proposing.
	err = c.call(ctx, "/kv/put", map[string]string{"value": etcdB64("1")}, &etcdPutResponse{})
	se, ok := err.(*etcdStatusError)
	if !ok || se.HTTPStatus != 400 || se.Code != etcdCodeInvalidArgument ||
		se.Message != "etcdserver: key is not provided" || !se.refused() {
		t.Errorf("put without key: error %#v, want a refused 400, code 3, etcdserver: key is not provided", err)
	}
	if o := etcdMutationOutcome(int64(1), err); o.Type != history.Fail {
		t.Errorf("put without key: outcome %v, want fail", o.Type)
	}
}

// An outcome is Unavailable when the member did not take the request: it
// has no leader or is not ready (or no connection was made: see
// TestEtcdConnectionRefused). Requests it took, or refused for what they
// were, are not, whatever their type.
func TestEtcdUnavailable(t *testing.T) {
	read, write := Op{F: history.FRead, Key: "k1"}, Op{F: history.FWrite, Key: "k1", Value: int64(42)}
	tests := []struct {
		op     Op
		status int
		body   string
		want   bool
	}{
		{write, 503, etcdErrBody(14, "etcdserver: no leader"), true},
		{read, 503, etcdErrBody(14, "etcdserver: no leader"), true},
		{write, 500, etcdErrBody(2, "raft proposal dropped"), true},
		{write, 503, etcdErrBody(14, "etcdserver: not capable"), true},
		{Op{F: history.FAdd, Value: int64(7)}, 500, etcdErrBody(2, "etcdserver: too many requests"), true},
		{Op{F: history.FRead}, 503, etcdErrBody(14, "etcdserver: no leader"), true},
		{write, 503, etcdErrBody(14, "etcdserver: request timed out"), false},
		{read, 503, etcdErrBody(14, "etcdserver: request timed out"), false},
		{write, 503, etcdErrBody(14, "etcdserver: leader changed"), false},
		{write, 400, etcdErrBody(3, "etcdserver: request is too large"), false},
		{write, 429, etcdErrBody(8, "etcdserver: mvcc: database space exceeded"), false},
		{write, 404, "404 page not found\n", false},
		{Op{F: history.FCAS, Key: "k1", Value: [2]int64{5, 6}}, 200, "{" + etcdOKHeader + "}", false},
		{write, 200, "{" + etcdOKHeader + "}", false},
	}
	for _, tt := range tests {
		g := newEtcdFakeGateway(t, tt.status, tt.body)
		c := newTestEtcdClient(t, g.srv.URL, EtcdOptions{})
		if got := c.Do(context.Background(), tt.op); got.Unavailable != tt.want {
			t.Errorf("%s answered %d %s: %v (%s), Unavailable %v; want %v",
				tt.op.F, tt.status, tt.body, got.Type, got.Error, got.Unavailable, tt.want)
		}
	}
}
