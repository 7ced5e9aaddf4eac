package faultfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// The control API, served over a unix socket (mode 0600: only root
// steers the file system), each answer one JSON object:
//
//	POST   /power-loss  drops all that is not durable; answers
//	                    PowerLossResult (what was dropped)
//	PUT    /errors      body ErrorsRequest: injects errors, replacing
//	                    the mode in force; answers Status
//	DELETE /errors      ends error injection; answers Status
//	GET    /status      answers Status
//
// A refused request answers 400 with {"error": "..."}; a power loss
// refused because files of the mount are still open answers 409, and one
// that failed half-way 500, the same way.

// ErrorsRequest is the body of PUT /errors: the operations On fail with
// Kind, for ForMS milliseconds from now (0: until cleared; at most
// MaxForMS).
type ErrorsRequest struct {
	Kind  string `json:"kind"`
	On    string `json:"on"`
	ForMS int64  `json:"for_ms,omitempty"`
}

// PowerLossResult is the answer to POST /power-loss: what was not
// durable, and is gone.
type PowerLossResult struct {
	Dropped Status `json:"dropped"`
}

// MaxForMS is the longest timed error injection, a day in milliseconds:
// a longer ErrorsRequest.ForMS is refused (a far larger one would
// overflow time.Duration, whose limit is about 292 years, into the past).
const MaxForMS = 24 * 60 * 60 * 1000

// maxRequestBytes bounds a control request's body.
const maxRequestBytes = 1 << 16

// Handler serves the control API of the file system t tracks. A power
// loss waits up to closeWait for the files of the mount to be closed
// (the programs using them killed), and is refused if some still are.
func Handler(t *Tracker, closeWait time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) { answer(w, http.StatusOK, t.Status()) })
	mux.HandleFunc("POST /power-loss", func(w http.ResponseWriter, r *http.Request) {
		if n := waitClosed(r.Context(), t, closeWait); n > 0 {
			answer(w, http.StatusConflict, map[string]string{"error": fmt.Sprintf(
				"power loss: %d files of the mount are still open: kill the programs that use it first", n)})
			return
		}
		dropped, err := t.PowerLoss()
		if err != nil {
			answer(w, http.StatusInternalServerError, map[string]string{"error": "power loss: " + err.Error()})
			return
		}
		answer(w, http.StatusOK, PowerLossResult{Dropped: dropped})
	})
	mux.HandleFunc("PUT /errors", func(w http.ResponseWriter, r *http.Request) {
		var req ErrorsRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, maxRequestBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			answer(w, http.StatusBadRequest, map[string]string{"error": "errors: " + err.Error()})
			return
		}
		m := ErrorMode{Kind: req.Kind, On: req.On}
		if err := req.checkForMS(); err != nil {
			answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		if req.ForMS > 0 {
			until := t.now().Add(time.Duration(req.ForMS) * time.Millisecond).UTC()
			m.Until = &until
		}
		if err := t.SetErrors(m); err != nil {
			answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		answer(w, http.StatusOK, t.Status())
	})
	mux.HandleFunc("DELETE /errors", func(w http.ResponseWriter, _ *http.Request) {
		t.ClearErrors()
		answer(w, http.StatusOK, t.Status())
	})
	return mux
}

// checkForMS says, in one line, what is wrong with req.ForMS.
func (req ErrorsRequest) checkForMS() error {
	switch {
	case req.ForMS < 0:
		return fmt.Errorf("errors: for_ms %d is negative", req.ForMS)
	case req.ForMS > MaxForMS:
		return fmt.Errorf("errors: for_ms %d is past the limit of %d (a day)", req.ForMS, MaxForMS)
	}
	return nil
}

// waitClosed polls until no file of the mount is open, ctx ends or wait
// passed, and returns how many are open then.
func waitClosed(ctx context.Context, t *Tracker, wait time.Duration) int64 {
	deadline := time.Now().Add(wait)
	for {
		n := t.OpenFiles()
		if n == 0 || !time.Now().Before(deadline) {
			return n
		}
		tick := time.NewTimer(controlPoll)
		select {
		case <-ctx.Done():
			tick.Stop()
			return t.OpenFiles()
		case <-tick.C:
		}
	}
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Client steers the file system whose control socket is Socket. A file
// system that has just started may not have opened its socket yet: each
// call tries again until its context ends.
type Client struct{ Socket string }

// controlPoll is the pause between two tries to reach a socket that is
// not there yet.
const controlPoll = 50 * time.Millisecond

// PowerLoss drops all that is not durable (the programs using the files
// must be dead), and says what that was.
func (c Client) PowerLoss(ctx context.Context) (PowerLossResult, error) {
	var out PowerLossResult
	return out, c.do(ctx, http.MethodPost, "/power-loss", nil, &out)
}

// SetErrors injects errors as req says.
func (c Client) SetErrors(ctx context.Context, req ErrorsRequest) (Status, error) {
	var out Status
	return out, c.do(ctx, http.MethodPut, "/errors", req, &out)
}

// ClearErrors ends error injection.
func (c Client) ClearErrors(ctx context.Context) (Status, error) {
	var out Status
	return out, c.do(ctx, http.MethodDelete, "/errors", nil, &out)
}

// Status is what the file system holds that is not durable.
func (c Client) Status(ctx context.Context) (Status, error) {
	var out Status
	return out, c.do(ctx, http.MethodGet, "/status", nil, &out)
}

// refusedError is a request the file system answered with an error.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return "fault file system refused: " + e.msg }

// do sends one request, again while the socket cannot be reached, and
// decodes the answer into out.
func (c Client) do(ctx context.Context, method, path string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", c.Socket)
		},
	}}
	defer hc.CloseIdleConnections()
	for {
		err := send(ctx, hc, method, path, b, out)
		var refused *refusedError
		if err == nil || errors.As(err, &refused) {
			return err
		}
		t := time.NewTimer(controlPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("fault file system at %s: %w", c.Socket, err)
		case <-t.C:
		}
	}
}

func send(ctx context.Context, hc *http.Client, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://faultfs"+path, strings.NewReader(string(body)))
	if err != nil {
		return &refusedError{msg: err.Error()}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxRequestBytes))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(raw))
		}
		return &refusedError{msg: e.Error}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &refusedError{msg: fmt.Sprintf("answer: %v", err)}
	}
	return nil
}
