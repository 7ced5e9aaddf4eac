package nodeapi

import (
	"context"
	"encoding/json"
	"net/http"
)

// Get reads key: linearizably (through the leader's read index), or when
// stale from the node's own store. found is false when the node answers
// 404. A 200 without a value, or with a body that is not a ValueResponse,
// is an error saying so.
func (c *Client) Get(ctx context.Context, key string, stale bool) (value string, found bool, err error) {
	query := ""
	if stale {
		query = StaleParam + "=true"
	}
	a, err := c.do(ctx, RouteGet, key, query, nil)
	switch {
	case err != nil:
		return "", false, err
	case a.status == http.StatusNotFound:
		return "", false, nil
	case a.status != http.StatusOK:
		return "", false, a.err()
	case a.readErr != nil:
		return "", false, unreadable(a.readErr)
	}
	var v ValueResponse
	if err := json.Unmarshal(a.body, &v); err != nil {
		return "", false, unreadable(err)
	}
	if v.Value == nil {
		return "", false, errNoValue
	}
	return *v.Value, true, nil
}

// Put sets key to value; id names the write for deduplication.
func (c *Client) Put(ctx context.Context, key, value string, id WriteID) error {
	return c.write(ctx, RoutePut, key, &WriteRequest{Value: &value, Client: id.Client, Seq: id.Seq})
}

// CAS sets key to to if it holds from; id names the write for
// deduplication. When the key holds another value the error is an *Error
// with status 409 and the current value.
func (c *Client) CAS(ctx context.Context, key, from, to string, id WriteID) error {
	return c.write(ctx, RouteCAS, key, &WriteRequest{From: &from, To: &to, Client: id.Client, Seq: id.Seq})
}

// Delete removes key.
func (c *Client) Delete(ctx context.Context, key string) error {
	return c.write(ctx, RouteDelete, key, nil)
}

// write sends a write and wants a 200, whose body it ignores.
func (c *Client) write(ctx context.Context, route, key string, body *WriteRequest) error {
	var b any
	if body != nil {
		b = body
	}
	a, err := c.do(ctx, route, key, "", b)
	switch {
	case err != nil:
		return err
	case a.status != http.StatusOK:
		return a.err()
	}
	return nil
}
