package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"chaos/history"
)

// DefaultReadConcurrency is how many GETs a final set read keeps in flight
// when ChaosNodeOptions.ReadConcurrency is zero.
const DefaultReadConcurrency = 16

// chaosNodeMaxBody bounds how much of an answer the client reads; chaos-node
// answers are a few dozen bytes.
const chaosNodeMaxBody = 1 << 20

// ChaosNodeOptions tunes a ChaosNodeClient. The zero value is a good
// default.
type ChaosNodeOptions struct {
	// ClientID names the client's writes for chaos-node's deduplication
	// (the "client" of a write body); 0 picks a random one.
	ClientID uint64
	// ReadConcurrency bounds the GETs in flight during a final set read; 0
	// means DefaultReadConcurrency.
	ReadConcurrency int
	// Pause is called after the node refused a request (no connection, or
	// 503: no leader, not applied), before the outcome is returned, so that
	// a worker bound to a node that cannot serve does not spin; nil waits
	// 20 ms or until ctx ends.
	Pause func(ctx context.Context)
}

// ChaosNodeClient is a Client of one chaos-node, over its HTTP/JSON API
// (CONTRACT.md) with keep-alive connections of its own. Register values and
// set elements are decimal strings in the store; set element v is the key
// s<v>.
//
// Outcomes, in short: a 200 is ok, and so is a read answered 404 (the key
// is absent: the value is nil); a 503 (no leader, not applied) is fail; a
// cas answered 409 is fail (mismatch); another 4xx means chaos sent a bad
// request and is fail with the error; anything else (504, another status, a
// timeout, a lost connection) is info for writes and fail for reads, since
// a read changes nothing. A value that is not an integer fails the read
// with an error saying what the node returned. Every outcome names the
// node.
type ChaosNodeClient struct {
	node      string
	base      string // http://host:port
	http      *http.Client
	transport *http.Transport
	id        uint64
	seq       uint64 // the last write's seq; one worker at a time, so not atomic
	readers   int
	pause     func(context.Context)
}

// NewChaosNodeClient returns a client of the chaos-node named node serving
// clients at addr (host:port).
func NewChaosNodeClient(node, addr string, opts ChaosNodeOptions) (*ChaosNodeClient, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("chaos-node client for %s: address %q: %w", node, addr, err)
	}
	if opts.ReadConcurrency < 0 {
		return nil, fmt.Errorf("chaos-node client for %s: read concurrency %d is negative", node, opts.ReadConcurrency)
	}
	c := &ChaosNodeClient{node: node, base: "http://" + addr, id: opts.ClientID, readers: opts.ReadConcurrency,
		pause: opts.Pause}
	if c.pause == nil {
		c.pause = pauseAfterRefusal
	}
	for c.id == 0 {
		c.id = rand.Uint64()
	}
	if c.readers == 0 {
		c.readers = DefaultReadConcurrency
	}
	c.transport = &http.Transport{
		Proxy:               nil, // always talk to the node itself
		DialContext:         (&net.Dialer{}).DialContext,
		MaxIdleConnsPerHost: c.readers, // one for the load, all of them for a final read
		DisableCompression:  true,
	}
	c.http = &http.Client{Transport: c.transport}
	return c, nil
}

// Close closes the client's idle connections.
func (c *ChaosNodeClient) Close() error {
	c.transport.CloseIdleConnections()
	return nil
}

// Do performs op; see ChaosNodeClient for how answers map to outcomes.
func (c *ChaosNodeClient) Do(ctx context.Context, op Op) history.Outcome {
	out := c.do(ctx, op)
	out.Node = c.node
	return out
}

func (c *ChaosNodeClient) do(ctx context.Context, op Op) history.Outcome {
	switch v := op.Value.(type) {
	case nil:
		if op.F == FRead && op.Key == "" {
			return c.readSet(ctx, op.Attempted)
		}
		if op.F == FRead {
			return c.read(ctx, op.Key)
		}
	case int64:
		if op.F == FWrite {
			return c.put(ctx, op.Key, strconv.FormatInt(v, 10))
		}
		if op.F == FAdd {
			return c.put(ctx, chaosNodeSetKey(v), "1")
		}
	case [2]int64:
		if op.F == FCAS {
			return c.cas(ctx, op.Key, v[0], v[1])
		}
	}
	return failf("chaos-node client cannot perform %s with value %T (a bug in chaos)", op.F, op.Value)
}

// chaosNodeSetKey is the key that holds set element v.
func chaosNodeSetKey(v int64) string { return "s" + strconv.FormatInt(v, 10) }

// read performs a linearizable GET of key. Any failure is fail: a read
// changes nothing, so not knowing its answer means it did not happen.
func (c *ChaosNodeClient) read(ctx context.Context, key string) history.Outcome {
	a, err := c.roundTrip(ctx, http.MethodGet, key, "", nil)
	switch {
	case err != nil:
		return failf("read %s: %v", key, err)
	case a.status == http.StatusNotFound:
		return history.Outcome{Type: history.OK}
	case a.status != http.StatusOK:
		return failf("read %s: %s", key, a)
	}
	v, err := a.integer()
	if err != nil {
		return failf("read %s: %v", key, err)
	}
	return history.Outcome{Type: history.OK, Value: &v}
}

// put writes value to key.
func (c *ChaosNodeClient) put(ctx context.Context, key, value string) history.Outcome {
	body := chaosNodeWrite{Value: &value}
	a, err := c.roundTrip(ctx, http.MethodPut, key, "", c.sign(&body))
	if err == nil && a.status == http.StatusOK {
		return history.Outcome{Type: history.OK}
	}
	return writeFailure("write "+key, a, err)
}

// cas sets key to to if it holds from.
func (c *ChaosNodeClient) cas(ctx context.Context, key string, from, to int64) history.Outcome {
	f, t := strconv.FormatInt(from, 10), strconv.FormatInt(to, 10)
	body := chaosNodeWrite{From: &f, To: &t}
	a, err := c.roundTrip(ctx, http.MethodPost, key, "/cas", c.sign(&body))
	switch {
	case err != nil:
	case a.status == http.StatusOK:
		return history.Outcome{Type: history.OK}
	case a.status == http.StatusConflict:
		return failf("cas mismatch: %s is %s", key, a.current())
	}
	return writeFailure("cas "+key, a, err)
}

// writeFailure classifies a write that did not answer 200: fail when the
// node said it was not applied (503) or refused it as malformed (4xx: a bug
// in chaos, said in the error), info otherwise. A transport error is info,
// except a failure to connect at all (see dialFailed): a killed node's
// refused connections would otherwise flood the history with unknowns.
func writeFailure(what string, a chaosNodeAnswer, err error) history.Outcome {
	switch {
	case err != nil && dialFailed(err):
		return failf("%s: %v; not sent", what, err)
	case err != nil:
		return history.Outcome{Type: history.Info, Error: fmt.Sprintf("%s: %v; outcome unknown", what, err)}
	case a.status == http.StatusServiceUnavailable:
		return failf("%s: %s", what, a)
	case a.status >= 400 && a.status < 500 && a.status != http.StatusConflict:
		return failf("%s: refused: %s (a bug in chaos's request)", what, a)
	}
	return history.Outcome{Type: history.Info, Error: fmt.Sprintf("%s: %s; outcome unknown", what, a)}
}

func failf(format string, args ...any) history.Outcome {
	return history.Outcome{Type: history.Fail, Error: fmt.Sprintf(format, args...)}
}

// chaosNodeWrite is the JSON body of a PUT or a cas POST. Client and Seq let
// chaos-node apply a retried request once; chaos never retries, but every
// write carries them so the node's deduplication is exercised too.
type chaosNodeWrite struct {
	Value  *string `json:"value,omitempty"`
	From   *string `json:"from,omitempty"`
	To     *string `json:"to,omitempty"`
	Client uint64  `json:"client"`
	Seq    uint64  `json:"seq"`
}

// sign stamps body with the client id and the next seq and encodes it.
func (c *ChaosNodeClient) sign(body *chaosNodeWrite) []byte {
	c.seq++
	body.Client, body.Seq = c.id, c.seq
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("encoding a chaos-node write body cannot fail: %v", err))
	}
	return b
}

// chaosNodeAnswer is what the client keeps of an HTTP answer.
type chaosNodeAnswer struct {
	status int
	value  *string // the body's "value"; nil when absent or null
	msg    string  // the body's "error"
	bad    error   // the body could not be read or decoded
}

// String describes the answer for an error message.
func (a chaosNodeAnswer) String() string {
	s := "status " + strconv.Itoa(a.status)
	if a.msg != "" {
		s += ": " + a.msg
	}
	if a.bad != nil {
		s += fmt.Sprintf(" (unreadable body: %v)", a.bad)
	}
	return s
}

// integer returns the body's value as an integer. A body without one, or
// with something else, is an error saying what the node returned.
func (a chaosNodeAnswer) integer() (int64, error) {
	switch {
	case a.bad != nil:
		return 0, fmt.Errorf("unreadable body: %w", a.bad)
	case a.value == nil:
		return 0, errors.New(`the node answered 200 without a "value"`)
	}
	v, err := strconv.ParseInt(*a.value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the node returned %.40q, not an integer", *a.value)
	}
	return v, nil
}

// current describes the value a 409 says the key holds.
func (a chaosNodeAnswer) current() string {
	switch {
	case a.bad != nil:
		return fmt.Sprintf("unknown (unreadable body: %v)", a.bad)
	case a.value == nil:
		return "absent"
	}
	return strconv.Quote(*a.value)
}

// roundTrip sends one request on /kv/<key><suffix> and reads its answer.
// The error is the transport's: the request may or may not have been
// received.
func (c *ChaosNodeClient) roundTrip(ctx context.Context, method, key, suffix string, body []byte) (chaosNodeAnswer, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/kv/"+url.PathEscape(key)+suffix, r)
	if err != nil {
		return chaosNodeAnswer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the method and URL are said by the caller
		}
		if dialFailed(err) {
			c.pause(ctx)
		}
		return chaosNodeAnswer{}, err
	}
	defer resp.Body.Close()
	a := chaosNodeAnswer{status: resp.StatusCode}
	if a.status == http.StatusServiceUnavailable {
		defer c.pause(ctx)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, chaosNodeMaxBody))
	var decoded struct {
		Value *string `json:"value"`
		Error string  `json:"error"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &decoded)
	}
	a.value, a.msg, a.bad = decoded.Value, decoded.Error, err
	return a, nil
}
