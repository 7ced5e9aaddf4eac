package described

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"chaos/db"
)

// MaxAnswerBytes bounds how much of an HTTP answer chaos reads.
const MaxAnswerBytes = 64 << 20

// NewRequest renders r for the node at clientAddr with the variables v.
func (r Request) NewRequest(ctx context.Context, clientAddr string, v Vars) (*http.Request, error) {
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body.IsSet() {
		body = strings.NewReader(r.Body.Expand(v))
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+clientAddr+r.Path.Expand(v), body)
	if err != nil {
		return nil, err
	}
	if r.Body.IsSet() {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, x := range r.Headers {
		req.Header.Set(k, x)
	}
	return req, nil
}

// ReadAnswer reads the body of resp, at most MaxAnswerBytes of it.
func ReadAnswer(resp *http.Response) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxAnswerBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", MaxAnswerBytes)
	}
	return b, nil
}

// askJSON sends r to n (at its client address, r's templates expanded
// with n's variables) and decodes the JSON answer of a 2xx status; what
// names the probe in the errors.
func (s *System) askJSON(ctx context.Context, r Request, n db.Node, what string) (any, error) {
	v := s.Vars(n)
	req, err := r.NewRequest(ctx, v[VarClientAddr], v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := ReadAnswer(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: status %d", what, resp.StatusCode)
	}
	doc, err := Decode(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return doc, nil
}
