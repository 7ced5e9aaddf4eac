package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"chaos/history"
	"chaos/node/nodeapi"
)

// DefaultReadConcurrency is how many GETs a final set read keeps in flight
// when ChaosNodeOptions.ReadConcurrency is zero.
const DefaultReadConcurrency = 16

// ChaosNodeOptions tunes a ChaosNodeClient. The zero value is a good
// default.
type ChaosNodeOptions struct {
	// ClientID names the client's writes for chaos-node's deduplication
	// (the "client" of a write body); 0 picks a random one.
	ClientID uint64
	// ReadConcurrency bounds the GETs in flight during a final set read; 0
	// means DefaultReadConcurrency.
	ReadConcurrency int
	// StaleReads makes every read (the register's reads and the set's
	// final read) a stale one (?stale=true): answered by the node from its
	// own store, without asking the leader, so it may miss recent writes.
	// By default reads are linearizable.
	StaleReads bool
}

// ChaosNodeClient is a Client of one chaos-node, over its HTTP/JSON API
// (docs/FORMATS.md) with keep-alive connections of its own. Register values and
// set elements are decimal strings in the store; set element v is the key
// s<v>.
//
// Outcomes, in short: a 200 is ok, and so is a read answered 404 (the key
// is absent: the value is nil); a 503 (no leader, not applied) is fail,
// and Unavailable, as is a connection refused (see dialFailed); a
// cas answered 409 is fail (mismatch); another 4xx means chaos sent a bad
// request and is fail with the error; anything else (504, another status, a
// timeout, a lost connection) is info for writes and fail for reads, since
// a read changes nothing. A value that is not an integer fails the read
// with an error saying what the node returned. Every outcome names the
// node.
type ChaosNodeClient struct {
	node      string
	api       *nodeapi.Client
	transport *ConnTransport
	id        uint64
	seq       uint64 // the last write's seq; one worker at a time, so not atomic
	readers   int
	stale     bool
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
	c := &ChaosNodeClient{node: node, id: opts.ClientID, readers: opts.ReadConcurrency, stale: opts.StaleReads}
	for c.id == 0 {
		c.id = rand.Uint64()
	}
	if c.readers == 0 {
		c.readers = DefaultReadConcurrency
	}
	c.transport = &ConnTransport{MaxIdle: c.readers} // one for the load, all of them for a final read
	c.api = nodeapi.NewClient(addr, &http.Client{Transport: c.transport})
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
		if op.F == history.FRead && op.Key == "" {
			return c.readSet(ctx, op.Attempted)
		}
		if op.F == history.FRead {
			return c.read(ctx, op.Key)
		}
	case int64:
		if op.F == history.FWrite {
			return c.put(ctx, op.Key, op.ValueText(v))
		}
		if op.F == history.FAdd {
			return c.put(ctx, chaosNodeSetKey(v), "1")
		}
	case [2]int64:
		if op.F == history.FCAS {
			return c.cas(ctx, op.Key, v[0], v[1])
		}
	}
	return failf("chaos-node client cannot perform %s with value %T (a bug in chaos)", op.F, op.Value)
}

// chaosNodeSetKey is the key that holds set element v.
func chaosNodeSetKey(v int64) string { return "s" + strconv.FormatInt(v, 10) }

// read performs a GET of key, linearizable unless c.stale. Any failure is
// fail: a read changes nothing, so not knowing its answer means it did not
// happen.
func (c *ChaosNodeClient) read(ctx context.Context, key string) history.Outcome {
	s, found, err := c.api.Get(ctx, key, c.stale)
	switch {
	case err != nil:
		out := failf("read %s: %v", key, transportCause(err))
		out.Unavailable = nodeRefused(err)
		return out
	case !found:
		return history.Outcome{Type: history.OK}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return failf("read %s: the node returned %.40q, not an integer", key, s)
	}
	return history.Outcome{Type: history.OK, Value: &v}
}

// put writes value to key.
func (c *ChaosNodeClient) put(ctx context.Context, key, value string) history.Outcome {
	err := transportCause(c.api.Put(ctx, key, value, c.sign()))
	if err == nil {
		return history.Outcome{Type: history.OK}
	}
	return writeFailure("write "+key, err)
}

// cas sets key to to if it holds from.
func (c *ChaosNodeClient) cas(ctx context.Context, key string, from, to int64) history.Outcome {
	err := transportCause(c.api.CAS(ctx, key, strconv.FormatInt(from, 10), strconv.FormatInt(to, 10), c.sign()))
	var ae *nodeapi.Error
	switch {
	case err == nil:
		return history.Outcome{Type: history.OK}
	case errors.As(err, &ae) && ae.Status == http.StatusConflict:
		return failf("cas mismatch: %s is %s", key, current(ae))
	}
	return writeFailure("cas "+key, err)
}

// writeFailure classifies a write that did not answer 200: fail when the
// node said it was not applied (503) or refused it as malformed (4xx: a bug
// in chaos, said in the error), info otherwise. A transport error is info,
// except a failure to connect at all (see dialFailed): a killed node's
// refused connections would otherwise flood the history with unknowns. A
// 503 and a refused connection are also Unavailable.
func writeFailure(what string, err error) history.Outcome {
	var ae *nodeapi.Error
	switch {
	case dialFailed(err):
		out := failf("%s: %v; not sent", what, err)
		out.Unavailable = true
		return out
	case !errors.As(err, &ae):
		return history.Outcome{Type: history.Info, Error: fmt.Sprintf("%s: %v; outcome unknown", what, err)}
	case ae.Status == http.StatusServiceUnavailable:
		out := failf("%s: %s", what, ae)
		out.Unavailable = true
		return out
	case ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusConflict:
		return failf("%s: refused: %s (a bug in chaos's request)", what, ae)
	}
	msg := fmt.Sprintf("%s: %s", what, ae)
	if !strings.Contains(ae.Message, "outcome unknown") { // the node's 504s say it already
		msg += "; outcome unknown"
	}
	return history.Outcome{Type: history.Info, Error: msg}
}

func failf(format string, args ...any) history.Outcome {
	return history.Outcome{Type: history.Fail, Error: fmt.Sprintf(format, args...)}
}

// sign returns the id of the next write: the client's id and the next seq.
// Chaos never retries, but every write carries them so that chaos-node's
// deduplication is exercised too.
func (c *ChaosNodeClient) sign() nodeapi.WriteID {
	c.seq++
	return nodeapi.WriteID{Client: c.id, Seq: c.seq}
}

// current describes the value a 409 says the key holds.
func current(e *nodeapi.Error) string {
	switch {
	case e.BodyErr != nil:
		return fmt.Sprintf("unknown (unreadable body: %v)", e.BodyErr)
	case e.Value == nil:
		return "absent"
	}
	return strconv.Quote(*e.Value)
}

// transportCause strips a transport error of the method and URL, which
// the caller says; other errors are returned as they are.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// nodeRefused reports whether err says the node did not take the request
// at all: no connection could be made, or it answered 503 (no leader, not
// applied). Such an outcome is Unavailable, and its worker backs off.
func nodeRefused(err error) bool {
	var ae *nodeapi.Error
	return dialFailed(err) || errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable
}
