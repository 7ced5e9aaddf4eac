package nodeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// MaxAnswerBytes bounds how much of an answer the Client reads; chaos-node
// answers are a few hundred bytes.
const MaxAnswerBytes = 1 << 20

// Client is a client of one chaos-node's API. It is thin: one method per
// route, typed bodies, and an *Error for every unwanted answer; what an
// answer means to a test (ok, fail or unknown) is the caller's to decide.
//
// Errors are of three kinds: the *http.Client's own error (as it returns
// it: a *url.Error; the request may or may not have reached the node), an
// *Error (the node answered another status), or, for a 200 whose body
// cannot be used, an error that says so. A Client is safe for concurrent
// use if its *http.Client is.
type Client struct {
	base string // http://host:port
	http *http.Client
}

// NewClient returns a client of the node serving clients at addr
// (host:port), sending requests with hc: its timeouts and transport are
// the caller's. A nil hc means http.DefaultClient.
func NewClient(addr string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: "http://" + addr, http: hc}
}

// answer is what a request got back: the status and the body, or why the
// body could not be read.
type answer struct {
	status  int
	body    []byte
	readErr error
}

// err is the *Error of an unwanted answer.
func (a answer) err() *Error { return answerError(a.status, a.body, a.readErr) }

// do sends route for key, with query (none when empty) and body encoded as
// JSON (none when nil), and reads the answer. The error is the transport's,
// or the request could not be made.
func (c *Client) do(ctx context.Context, route, key, query string, body any) (answer, error) {
	path := Path(route, key)
	if query != "" {
		path += "?" + query
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, fmt.Errorf("encoding the body of %s: %w", route, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, Method(route), c.base+path, rd)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	a.body, a.readErr = io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	return a, nil
}

// decode sends route like do and decodes a 200's body into out; any other
// status is an *Error.
func (c *Client) decode(ctx context.Context, route string, body, out any) error {
	return c.decodeAt(ctx, route, "", body, out)
}

// decodeAt is decode for a route with a {key} or {id}.
func (c *Client) decodeAt(ctx context.Context, route, key string, body, out any) error {
	a, err := c.do(ctx, route, key, "", body)
	switch {
	case err != nil:
		return err
	case a.status != http.StatusOK:
		return a.err()
	case a.readErr != nil:
		return unreadable(a.readErr)
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return unreadable(err)
	}
	return nil
}

// Status asks the node for its Status.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	err := c.decode(ctx, RouteStatus, nil, &st)
	return st, err
}

// errNoValue is a 200 to RouteGet without a value.
var errNoValue = errors.New(`the node answered 200 without a "value"`)
