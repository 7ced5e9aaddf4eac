package faultproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// The control API, served over a unix socket in the proxy's directory
// (ControlSocket), so that only who may enter that directory (root, on a
// host) steers the proxy:
//
//	PUT /links/{owner}  body LinksRequest: replaces owner's links (none
//	                    removes them); answers Status
//	GET /links          answers Status
//
// Errors answer 400 (a refused request) or 405, with {"error": "..."}.

// ControlSocket is the control socket of the proxy whose directory is dir.
func ControlSocket(dir string) string { return filepath.Join(dir, "control.sock") }

// LinksRequest is the body of PUT /links/{owner}.
type LinksRequest struct {
	Links []Link `json:"links"`
}

// Status is the proxy's answer: the port it takes redirected connections
// on (127.0.0.1:Port), every owner's links, and its connections: how many
// it forwards, may forward at once, and refused at that cap.
type Status struct {
	Port   int               `json:"port"`
	Owners map[string][]Link `json:"owners"`
	Conns  Conns             `json:"conns"`
}

// maxRequestBytes bounds a control request's body.
const maxRequestBytes = 1 << 20

// Handler serves the control API for the proxy that forwards with t,
// listens on port, and counts its connections with conns (Proxy.Conns).
func Handler(t *Table, port int, conns func() Conns) http.Handler {
	mux := http.NewServeMux()
	status := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Status{Port: port, Owners: t.Owners(), Conns: conns()})
	}
	mux.HandleFunc("GET /links", func(w http.ResponseWriter, _ *http.Request) { status(w) })
	mux.HandleFunc("PUT /links/{owner}", func(w http.ResponseWriter, r *http.Request) {
		var req LinksRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, maxRequestBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			controlError(w, fmt.Errorf("links: %w", err))
			return
		}
		if err := t.Set(r.PathValue("owner"), req.Links); err != nil {
			controlError(w, err)
			return
		}
		status(w)
	})
	return mux
}

func controlError(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// controlPoll is the pause between two tries to reach a proxy whose
// socket is not there yet.
const controlPoll = 50 * time.Millisecond

// SetLinks replaces owner's links in the proxy whose control socket is
// sock, and returns its status. A proxy that has just started may not
// have opened its socket yet: SetLinks tries again until ctx ends.
func SetLinks(ctx context.Context, sock, owner string, links []Link) (Status, error) {
	body, err := json.Marshal(LinksRequest{Links: links})
	if err != nil {
		return Status{}, err
	}
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	defer hc.CloseIdleConnections()
	for {
		st, err := putLinks(ctx, hc, owner, body)
		var refused *refusedError
		if err == nil || errors.As(err, &refused) {
			return st, err
		}
		t := time.NewTimer(controlPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return Status{}, fmt.Errorf("fault proxy at %s: %w", sock, err)
		case <-t.C:
		}
	}
}

// refusedError is a request the proxy answered with an error.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return "fault proxy refused: " + e.msg }

// putLinks sends one PUT /links/{owner}.
func putLinks(ctx context.Context, hc *http.Client, owner string, body []byte) (Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://fault-proxy/links/"+owner, strings.NewReader(string(body)))
	if err != nil {
		return Status{}, &refusedError{msg: err.Error()}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Status{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRequestBytes))
	if err != nil {
		return Status{}, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return Status{}, &refusedError{msg: e.Error}
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		return Status{}, &refusedError{msg: fmt.Sprintf("status: %v", err)}
	}
	return st, nil
}
