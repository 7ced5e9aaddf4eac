package workload

import (
	"context"
	"fmt"
	"maps"
	"net/http"

	"chaos/db/described"
	"chaos/history"
)

// HTTPTemplateClient is the Client of one node of a described system whose
// description gives HTTP request templates (client.http): each operation
// renders its request, sends it, and classifies the answer by the
// operation's rules (see classifyAnswer).
//
// Outcomes besides the rules': no connection could be made (refused, no
// route, the dial timed out) is fail with Unavailable set, as no byte was
// sent; any other transport failure (ctx ending, a connection lost, an
// unreadable answer) is info. Every outcome names the node.
type HTTPTemplateClient struct {
	node string
	addr string
	spec *described.HTTPClient
	vars described.Vars
	http *http.Client
}

var _ Client = (*HTTPTemplateClient)(nil)

// NewHTTPTemplateClient returns a client of the node named node, serving
// clients at addr (host:port), with the templates of spec and the node's
// variables vars.
func NewHTTPTemplateClient(node, addr string, spec *described.HTTPClient, vars described.Vars) *HTTPTemplateClient {
	return &HTTPTemplateClient{node: node, addr: addr, spec: spec, vars: vars, http: &http.Client{
		Transport:     &ConnTransport{MaxIdle: 1}, // one worker at a time
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Close closes the client's idle connection.
func (c *HTTPTemplateClient) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// Do performs op; see HTTPTemplateClient for how answers map to outcomes.
func (c *HTTPTemplateClient) Do(ctx context.Context, op Op) history.Outcome {
	out := c.do(ctx, op)
	out.Node = c.node
	return out
}

func (c *HTTPTemplateClient) do(ctx context.Context, op Op) history.Outcome {
	name, opVars, err := describedOp(op)
	if err != nil {
		return failf("%v", err)
	}
	spec := c.spec.Op(name)
	if spec == nil {
		return failf("the description has no client.http.%s", name)
	}
	vars := maps.Clone(c.vars)
	maps.Copy(vars, opVars)
	req, err := spec.NewRequest(ctx, c.addr, vars)
	if err != nil {
		return failf("%s: build the request: %v", name, err)
	}
	what := req.Method + " " + req.URL.RequestURI()
	resp, err := c.http.Do(req)
	switch {
	case err != nil && dialFailed(err):
		return history.Outcome{Type: history.Fail, Unavailable: true, Error: fmt.Sprintf("%s: %v; not sent", what, err)}
	case err != nil:
		return history.Outcome{Type: history.Info, Error: fmt.Sprintf("%s: %v; outcome unknown", what, err)}
	}
	defer resp.Body.Close()
	body, err := described.ReadAnswer(resp)
	if err != nil {
		return history.Outcome{Type: history.Info, Error: fmt.Sprintf("%s: HTTP %d, answer lost: %v; outcome unknown", what, resp.StatusCode, err)}
	}
	return classifyAnswer(name, spec.Answers, resp.StatusCode, body)
}
