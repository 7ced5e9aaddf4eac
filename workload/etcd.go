package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"chaos/history"
)

// DefaultEtcdKeyPrefix is prepended to every key the etcd client touches
// when EtcdOptions.KeyPrefix is empty.
const DefaultEtcdKeyPrefix = "chaos/"

// etcdSetDir is where, under the key prefix, the set workload keeps its
// elements: element v is the key prefix+"set/"+v holding v.
const etcdSetDir = "set/"

// etcdGatewayPath is the root of etcd's v3 JSON gateway. etcd 3.4 serves it
// at /v3 (and, deprecated, at /v3beta); 3.3 only at /v3beta; 3.5 and later
// only at /v3. Checked against etcd 3.4.23 by TestEtcdRealServer.
const etcdGatewayPath = "/v3"

// etcdMaxResponseBytes bounds how much of one answer the client reads. The
// largest answer is the set's final read, about 150 bytes per element.
const etcdMaxResponseBytes = 64 << 20

// EtcdOptions configures an EtcdClient.
type EtcdOptions struct {
	// Serializable makes every read (the register's reads and the set's
	// final read) serializable: answered by the member asked from its local
	// state, which may be stale. By default reads are linearizable.
	Serializable bool
	// KeyPrefix is prepended to every key; "" means DefaultEtcdKeyPrefix.
	KeyPrefix string
	// HTTPClient sends the requests. nil means one of the EtcdClient's own
	// that keeps its connection alive between requests and uses no proxy;
	// Close closes the idle connections of that one only.
	HTTPClient *http.Client
}

// EtcdClient is the Client of one etcd member (3.4 or later). It speaks to
// the member's v3 JSON gateway with net/http: ranges for reads, puts for
// writes and adds, and a one-compare transaction for cas. Keys and values
// travel base64-encoded, as the gateway wants; values are decimal integers.
//
// How failures are classified, for writes, cas and adds (reads change
// nothing, so every failed read is Fail):
//
//   - Fail, certainly not applied: no connection could be made (the dial
//     failed, so no byte of the request was sent); or the gateway answered
//     with a gRPC status that etcd only returns for requests it refused
//     before proposing them to Raft, or that its apply step refused without
//     changing anything (see etcdStatusError.refused for the table and the
//     reasons); or, when the error body carries no gRPC code at all, an HTTP
//     4xx other than 408 (a path or method nothing in front of etcd served).
//   - Info, outcome unknown: everything else, including the timeouts etcd
//     reports after proposing ("etcdserver: request timed out", "... possibly
//     due to previous leader failure", "... possibly due to connection
//     lost"), "etcdserver: server stopped", "etcdserver: leader changed",
//     any gRPC code not known to mean a refusal, a connection lost after the
//     request was sent, ctx ending, and a 200 whose body is not an etcd
//     answer.
//
// Whatever its type, an outcome is Unavailable (its worker backs off) when
// the member did not take the request: the dial failed, or etcd answered
// that it has no leader or is not ready (see etcdStatusError.unavailable).
type EtcdClient struct {
	node         string
	base         string // endpoint URL + etcdGatewayPath, no trailing slash
	prefix       string
	serializable bool
	http         *http.Client
	ownHTTP      bool
}

var _ Client = (*EtcdClient)(nil)

// NewEtcdClient returns a client of the etcd member named node (the name
// every Outcome carries) whose client URL is endpoint: "http://host:port",
// "https://host:port" or "host:port" (meaning http). A path in endpoint is
// kept, for a gateway behind a reverse proxy.
func NewEtcdClient(node, endpoint string, opts EtcdOptions) (*EtcdClient, error) {
	base, err := etcdBaseURL(endpoint)
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", node, err)
	}
	c := &EtcdClient{node: node, base: base, prefix: opts.KeyPrefix,
		serializable: opts.Serializable, http: opts.HTTPClient}
	if c.prefix == "" {
		c.prefix = DefaultEtcdKeyPrefix
	}
	if c.http == nil {
		c.http = etcdNewHTTPClient()
		c.ownHTTP = true
	}
	return c, nil
}

// etcdBaseURL turns a client endpoint into the URL of its v3 gateway.
func etcdBaseURL(endpoint string) (string, error) {
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("endpoint %q: scheme %q, want http or https", endpoint, u.Scheme)
	}
	if u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("endpoint %q: want scheme://host:port[/path], nothing more", endpoint)
	}
	return strings.TrimSuffix(u.String(), "/") + etcdGatewayPath, nil
}

// etcdNewHTTPClient returns the HTTP client of one EtcdClient: one worker
// uses it at a time, so one kept-alive connection is all it needs. It uses
// no proxy (a proxy would blur which failures reached etcd) and follows no
// redirects (etcd never sends one).
func etcdNewHTTPClient() *http.Client {
	return &http.Client{
		Transport:     &ConnTransport{MaxIdle: 1},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Do performs op against the member; see EtcdClient for how failures are
// classified. Completions of write, cas and add carry op's value.
func (c *EtcdClient) Do(ctx context.Context, op Op) history.Outcome {
	o := c.do(ctx, op)
	o.Node = c.node
	return o
}

func (c *EtcdClient) do(ctx context.Context, op Op) history.Outcome {
	switch op.F {
	case history.FRead:
		if op.Key == "" {
			return c.readSet(ctx)
		}
		return c.read(ctx, op.Key)
	case history.FWrite:
		v, ok := etcdInt64(op.Value)
		if !ok {
			return etcdFailf("etcd write %s: value %v (%T), want an int64", op.Key, op.Value, op.Value)
		}
		return c.put(ctx, c.prefix+op.Key, v, []byte(op.ValueText(v)))
	case history.FCAS:
		ev, ok := op.Value.([2]int64)
		if !ok {
			return etcdFailf("etcd cas %s: value %v (%T), want [2]int64", op.Key, op.Value, op.Value)
		}
		return c.cas(ctx, op.Key, ev)
	case history.FAdd:
		v, ok := etcdInt64(op.Value)
		if !ok {
			return etcdFailf("etcd add: value %v (%T), want an int64", op.Value, op.Value)
		}
		return c.put(ctx, c.prefix+etcdSetDir+strconv.FormatInt(v, 10), v, etcdDecimal(v))
	}
	return etcdFailf("etcd: unknown operation %q", op.F)
}

// Close releases the idle connection of the client's own HTTP client.
func (c *EtcdClient) Close() error {
	if c.ownHTTP {
		c.http.CloseIdleConnections()
	}
	return nil
}

// read is the register's read of key: OK with a *int64, nil when absent.
func (c *EtcdClient) read(ctx context.Context, key string) history.Outcome {
	k := c.prefix + key
	var resp etcdRangeResponse
	req := etcdRangeRequest{Key: []byte(k), Serializable: c.serializable}
	if err := c.call(ctx, "/kv/range", req, &resp); err != nil {
		return etcdReadFailure(fmt.Errorf("etcd range %s: %w", k, err))
	}
	if len(resp.Kvs) == 0 {
		return history.Outcome{Type: history.OK, Value: (*int64)(nil)}
	}
	if len(resp.Kvs) > 1 || string(resp.Kvs[0].Key) != k {
		return etcdFailf("etcd range %s: answer holds %d keys, the first %.64q", k, len(resp.Kvs), resp.Kvs[0].Key)
	}
	v, err := resp.Kvs[0].int64()
	if err != nil {
		return etcdFailf("etcd range %s: %v", k, err)
	}
	return history.Outcome{Type: history.OK, Value: &v}
}

// readSet is the set's final read: OK with the sorted elements, never nil.
func (c *EtcdClient) readSet(ctx context.Context) history.Outcome {
	dir := []byte(c.prefix + etcdSetDir)
	req := etcdRangeRequest{Key: dir, RangeEnd: etcdPrefixEnd(dir), Serializable: c.serializable}
	var resp etcdRangeResponse
	if err := c.call(ctx, "/kv/range", req, &resp); err != nil {
		return etcdReadFailure(fmt.Errorf("etcd range %s*: %w", dir, err))
	}
	elements := make([]int64, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		v, err := kv.int64()
		if err != nil {
			return etcdFailf("etcd range %s*: %v", dir, err)
		}
		elements = append(elements, v)
	}
	slices.Sort(elements)
	return history.Outcome{Type: history.OK, Value: elements}
}

// put sets key to text, the value v written out: the register's write and the set's add.
func (c *EtcdClient) put(ctx context.Context, key string, v int64, text []byte) history.Outcome {
	req := etcdPutRequest{Key: []byte(key), Value: text}
	if err := c.call(ctx, "/kv/put", req, &etcdPutResponse{}); err != nil {
		return etcdMutationOutcome(v, fmt.Errorf("etcd put %s: %w", key, err))
	}
	return history.Outcome{Type: history.OK, Value: v}
}

// cas sets key to ev[1] if it holds ev[0], in one transaction. etcd
// compares the value of an absent key as false, so a cas on it fails.
func (c *EtcdClient) cas(ctx context.Context, key string, ev [2]int64) history.Outcome {
	k := []byte(c.prefix + key)
	req := etcdTxnRequest{
		Compare: []etcdCompare{{Key: k, Target: "VALUE", Result: "EQUAL", Value: etcdDecimal(ev[0])}},
		Success: []etcdRequestOp{{RequestPut: &etcdPutRequest{Key: k, Value: etcdDecimal(ev[1])}}},
	}
	var resp etcdTxnResponse
	if err := c.call(ctx, "/kv/txn", req, &resp); err != nil {
		return etcdMutationOutcome(ev, fmt.Errorf("etcd txn %s: %w", k, err))
	}
	if !resp.Succeeded {
		return history.Outcome{Type: history.Fail, Value: ev,
			Error: fmt.Sprintf("cas mismatch: %s does not hold %d", k, ev[0])}
	}
	return history.Outcome{Type: history.OK, Value: ev}
}

// etcdMutationOutcome is the outcome of a write, cas or add that got err:
// Fail when etcd certainly did not apply it, else Info; Unavailable when
// etcdUnavailable says so.
func etcdMutationOutcome(value any, err error) history.Outcome {
	t := history.Info
	var notSent *etcdNotSentError
	var status *etcdStatusError
	if errors.As(err, &notSent) || (errors.As(err, &status) && status.refused()) {
		t = history.Fail
	}
	return history.Outcome{Type: t, Value: value, Error: err.Error(), Unavailable: etcdUnavailable(err)}
}

// etcdReadFailure is the outcome of a read that got err: Fail, as a read
// changes nothing; Unavailable when etcdUnavailable says so.
func etcdReadFailure(err error) history.Outcome {
	return history.Outcome{Type: history.Fail, Error: err.Error(), Unavailable: etcdUnavailable(err)}
}

// etcdUnavailable reports whether err says the member did not take the
// request at all, so that its worker backs off: no connection could be
// made, or etcd answered that it has no leader or is not ready to serve
// (see etcdStatusError.unavailable).
func etcdUnavailable(err error) bool {
	var notSent *etcdNotSentError
	var status *etcdStatusError
	return errors.As(err, &notSent) && dialFailed(notSent.err) ||
		errors.As(err, &status) && status.unavailable()
}

func etcdFailf(format string, args ...any) history.Outcome {
	return history.Outcome{Type: history.Fail, Error: fmt.Sprintf(format, args...)}
}

// etcdInt64 accepts the integer types a generator may put in Op.Value.
func etcdInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

func etcdDecimal(v int64) []byte { return strconv.AppendInt(nil, v, 10) }

// etcdPrefixEnd returns the range_end that makes a range cover exactly the
// keys starting with p: p with its last byte below 0xff incremented and the
// bytes after it dropped. When p is all 0xff bytes no such end exists, and
// "\x00" (to the end of the keyspace, as in etcd's clientv3) is returned.
func etcdPrefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}

// The gateway's JSON, for the fields the client uses. []byte fields travel
// as base64, as the gateway wants keys and values; int64 fields (revisions,
// counts) are JSON strings and are not read. The gateway omits false, empty
// and zero fields: an absent "succeeded" is false, an absent "kvs" empty,
// an absent "value" the empty value.
type (
	etcdRangeRequest struct {
		Key          []byte `json:"key"`
		RangeEnd     []byte `json:"range_end,omitempty"`
		Serializable bool   `json:"serializable"`
	}
	etcdPutRequest struct {
		Key   []byte `json:"key"`
		Value []byte `json:"value"`
	}
	etcdTxnRequest struct {
		Compare []etcdCompare   `json:"compare"`
		Success []etcdRequestOp `json:"success"`
	}
	etcdCompare struct {
		Key    []byte `json:"key"`
		Target string `json:"target"`
		Result string `json:"result"`
		Value  []byte `json:"value"`
	}
	etcdRequestOp struct {
		RequestPut *etcdPutRequest `json:"requestPut"`
	}

	// etcdAnswer is embedded in every response: etcd always sends a header,
	// so an answer without one did not come from etcd.
	etcdAnswer struct {
		Header json.RawMessage `json:"header"`
	}
	etcdRangeResponse struct {
		etcdAnswer
		Kvs []etcdKeyValue `json:"kvs"`
	}
	etcdPutResponse struct {
		etcdAnswer
	}
	etcdTxnResponse struct {
		etcdAnswer
		Succeeded bool `json:"succeeded"`
	}
	etcdKeyValue struct {
		Key   []byte `json:"key"`
		Value []byte `json:"value"`
	}
)

func (a *etcdAnswer) answered() bool { return len(a.Header) > 0 && string(a.Header) != "null" }

// int64 decodes kv's value, which the client wrote as a decimal integer.
func (kv etcdKeyValue) int64() (int64, error) {
	v, err := strconv.ParseInt(string(kv.Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("key %.64q holds %.64q, not a decimal integer", kv.Key, kv.Value)
	}
	return v, nil
}

// call POSTs req as JSON to the gateway's method (such as "/kv/put") and
// decodes a 200 answer into resp. Its error is an *etcdNotSentError when no
// byte of the request can have reached etcd, an *etcdStatusError when an
// answer other than 200 came, and anything else when the request was sent
// and its answer was lost, cut short or unreadable.
func (c *EtcdClient) call(ctx context.Context, method string, req any, resp interface{ answered() bool }) error {
	body, err := json.Marshal(req)
	if err != nil {
		return &etcdNotSentError{fmt.Errorf("encode request: %w", err)}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+method, bytes.NewReader(body))
	if err != nil {
		return &etcdNotSentError{fmt.Errorf("build request: %w", err)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hresp, err := c.http.Do(hreq)
	if err != nil {
		if dialFailed(err) {
			return &etcdNotSentError{err}
		}
		return err // a *url.Error naming the method and URL
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, etcdMaxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("read answer (HTTP %d): %w", hresp.StatusCode, err)
	}
	if len(data) > etcdMaxResponseBytes {
		return fmt.Errorf("answer (HTTP %d) is larger than %d bytes", hresp.StatusCode, etcdMaxResponseBytes)
	}
	if hresp.StatusCode != http.StatusOK {
		return etcdParseStatusError(hresp.StatusCode, data)
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("decode answer %.64q: %w", data, err)
	}
	if !resp.answered() {
		return fmt.Errorf("answer %.64q has no header: not from an etcd v3 gateway", data)
	}
	return nil
}

// etcdNotSentError is the error of a request that certainly never reached
// etcd.
type etcdNotSentError struct{ err error }

func (e *etcdNotSentError) Error() string { return "not sent: " + e.err.Error() }
func (e *etcdNotSentError) Unwrap() error { return e.err }

// etcdStatusError is an answer other than 200 OK. etcd's gateway
// (grpc-gateway) turns the gRPC status of a failed call into the HTTP status
// and a JSON body: {"error": msg, "message": msg, "code": c} in 3.4,
// {"code": c, "message": msg, "details": [...]} in 3.5 and later.
type etcdStatusError struct {
	HTTPStatus int
	Code       int    // the gRPC code; -1 when the body carried none
	Message    string // the gRPC message, or the start of a body that is not a gRPC status
}

func (e *etcdStatusError) Error() string {
	if e.Code < 0 {
		return fmt.Sprintf("HTTP %d: %s", e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("HTTP %d: %s (gRPC code %d)", e.HTTPStatus, e.Message, e.Code)
}

func etcdParseStatusError(httpStatus int, body []byte) *etcdStatusError {
	var b struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Code == nil {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return &etcdStatusError{HTTPStatus: httpStatus, Code: -1, Message: msg}
	}
	msg := b.Message
	if msg == "" {
		msg = b.Error
	}
	return &etcdStatusError{HTTPStatus: httpStatus, Code: *b.Code, Message: msg}
}

// unavailable reports whether e says the member cannot serve requests
// now, whatever the request: "etcdserver: no leader" and "raft proposal
// dropped" (no leader known, or leadership moving), "etcdserver: not
// capable" (the cluster version is not settled yet) and "etcdserver: too
// many requests" (applying lags committing). Each is a refusal (see
// refused); the others refused() names are about the request itself.
func (e *etcdStatusError) unavailable() bool {
	switch e.Message {
	case "etcdserver: no leader", "raft proposal dropped",
		"etcdserver: not capable", "etcdserver: too many requests":
		return true
	}
	return false
}

// gRPC status codes (google.golang.org/grpc/codes) that etcdStatusError.refused names.
const (
	etcdCodeInvalidArgument    = 3
	etcdCodeNotFound           = 5
	etcdCodeAlreadyExists      = 6
	etcdCodePermissionDenied   = 7
	etcdCodeFailedPrecondition = 9
	etcdCodeOutOfRange         = 11
	etcdCodeUnimplemented      = 12
	etcdCodeUnauthenticated    = 16
)

// refused reports whether the write, cas or add that got e was certainly
// not applied. From etcd 3.4's server (etcdserver/v3_server.go,
// api/v3rpc/{interceptor,key,quota,util}.go, rpctypes/error.go):
//
//   - "etcdserver: too many requests": refused before proposing, when the
//     applied index lags the committed one by more than 5000. It reaches the
//     gateway as code 2 (Unknown), as it is not a gRPC status in etcd's
//     error map, so it is matched by message.
//   - "raft proposal dropped" (code 2): Raft dropped the proposal before
//     appending it: a follower or candidate that knows no leader, or a
//     leader transferring leadership, removed, or over its limit of
//     uncommitted entries.
//   - "etcdserver: mvcc: database space exceeded" (code 8): refused by the
//     quota check before proposing, or by the apply step without a change.
//     Code 8 alone is not enough: gRPC also uses it for an answer too large
//     to receive, after the request was applied.
//   - "etcdserver: no leader", "etcdserver: not capable", "etcdserver: rpc
//     not supported for learner" (code 14): the interceptor refuses the
//     request before any handler runs. Every other code 14 is ambiguous:
//     the request timeouts, "server stopped" and "leader changed" come after
//     proposing, and transport errors between the gateway and the server
//     may come after sending.
//   - codes 3, 5, 6, 7, 9, 11, 12, 16 (InvalidArgument, NotFound,
//     AlreadyExists, PermissionDenied, FailedPrecondition, OutOfRange,
//     Unimplemented, Unauthenticated): request validation (empty key,
//     request too large, duplicate key in a txn, bad JSON or base64 at the
//     gateway), authentication, and apply-time refusals, none of which
//     changes the store.
//   - No gRPC code: something other than the gateway's error handler
//     answered (a path or method not served, a proxy). A 4xx other than 408
//     is a refusal to process the request; anything else is ambiguous.
//
// Every other code (1 Canceled, 2 Unknown, 4 DeadlineExceeded, 8, 10
// Aborted, 13 Internal, 14, 15 DataLoss) is ambiguous.
func (e *etcdStatusError) refused() bool {
	switch e.Message {
	case "etcdserver: too many requests", "raft proposal dropped",
		"etcdserver: mvcc: database space exceeded",
		"etcdserver: no leader", "etcdserver: not capable",
		"etcdserver: rpc not supported for learner":
		return true
	}
	switch e.Code {
	case etcdCodeInvalidArgument, etcdCodeNotFound, etcdCodeAlreadyExists,
		etcdCodePermissionDenied, etcdCodeFailedPrecondition, etcdCodeOutOfRange,
		etcdCodeUnimplemented, etcdCodeUnauthenticated:
		return true
	case -1:
		return e.HTTPStatus >= 400 && e.HTTPStatus < 500 && e.HTTPStatus != http.StatusRequestTimeout
	}
	return false
}
