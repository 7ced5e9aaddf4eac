package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"chaos/node/kv"
	"chaos/node/nodeapi"
)

// maxBodyBytes bounds a request body; larger bodies answer 413.
const maxBodyBytes = kv.MaxValueBytes*2 + 4096

// forwardedHeader marks a request a follower forwarded to the leader, so a
// request is forwarded at most once.
const forwardedHeader = "X-Chaos-Forwarded"

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(nodeapi.RouteGet, s.timed("read", s.handleGet))
	mux.HandleFunc(nodeapi.RoutePut, s.timed("write", s.handlePut))
	mux.HandleFunc(nodeapi.RouteCAS, s.timed("cas", s.handleCAS))
	mux.HandleFunc(nodeapi.RouteDelete, s.timed("delete", s.handleDelete))
	mux.HandleFunc(nodeapi.RouteStatus, s.handleStatus)
	mux.Handle(nodeapi.RouteMetrics, promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	s.hookRoutes(mux)
	s.memberRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// statusRecorder remembers the status code written, for the latency histogram.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Server) timed(op string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h(rec, r)
		s.metrics.requests.WithLabelValues(op, strconv.Itoa(rec.code)).Observe(time.Since(start).Seconds())
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, nodeapi.ErrorResponse{Error: msg})
}

// writeFailure maps a request error to its status code: 503 when the
// request certainly was not applied, 504 when its outcome is unknown.
func writeFailure(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errTimeout):
		writeError(w, http.StatusGatewayTimeout, err.Error())
	case errors.Is(err, errMemberConflict):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, errMemberUnknown):
		writeError(w, http.StatusNotFound, err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	}
}

// checkKey validates the {key} path value.
func checkKey(w http.ResponseWriter, r *http.Request) (string, bool) {
	key := r.PathValue("key")
	if key == "" {
		writeError(w, http.StatusBadRequest, "empty key")
		return "", false
	}
	if len(key) > kv.MaxKeyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("key is %d bytes; the limit is %d", len(key), kv.MaxKeyBytes))
		return "", false
	}
	return key, true
}

// readBody decodes a request body, answering 400 or 413 itself on failure.
func readBody(w http.ResponseWriter, r *http.Request) (nodeapi.WriteRequest, []byte, bool) {
	var b nodeapi.WriteRequest
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", maxBodyBytes))
		} else {
			writeError(w, http.StatusBadRequest, "reading body: "+err.Error())
		}
		return b, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, "malformed JSON body: "+err.Error())
		return b, nil, false
	}
	for _, v := range []*string{b.Value, b.From, b.To} {
		if v != nil && len(*v) > kv.MaxValueBytes {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("value over %d bytes", kv.MaxValueBytes))
			return b, nil, false
		}
	}
	return b, raw, true
}

func (s *Server) requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	key, ok := checkKey(w, r)
	if !ok {
		return
	}
	stale := r.URL.Query().Get(nodeapi.StaleParam) == "true"
	if stale || (s.bugs.staleRead && s.Status().Role != "leader") {
		v, found := s.store.Get(key)
		writeValue(w, v, found)
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, found, err := s.read(ctx, key)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeValue(w, v, found)
}

func writeValue(w http.ResponseWriter, v string, found bool) {
	if !found {
		writeError(w, http.StatusNotFound, "key not found")
		return
	}
	writeJSON(w, http.StatusOK, nodeapi.ValueResponse{Value: &v})
}

// keyAndBody validates the key and decodes the body of a write, answering
// the error itself when either is bad.
func keyAndBody(w http.ResponseWriter, r *http.Request) (string, nodeapi.WriteRequest, []byte, bool) {
	key, ok := checkKey(w, r)
	if !ok {
		return "", nodeapi.WriteRequest{}, nil, false
	}
	b, raw, ok := readBody(w, r)
	return key, b, raw, ok
}

func (s *Server) handlePut(w http.ResponseWriter, r *http.Request) {
	key, b, raw, ok := keyAndBody(w, r)
	if !ok {
		return
	}
	if b.Value == nil {
		writeError(w, http.StatusBadRequest, `body needs "value"`)
		return
	}
	s.write(w, r, raw, kv.Command{Op: kv.OpPut, Client: b.Client, Seq: b.Seq, Key: key, Value: *b.Value})
}

func (s *Server) handleCAS(w http.ResponseWriter, r *http.Request) {
	key, b, raw, ok := keyAndBody(w, r)
	if !ok {
		return
	}
	if b.From == nil || b.To == nil {
		writeError(w, http.StatusBadRequest, `body needs "from" and "to"`)
		return
	}
	s.write(w, r, raw, kv.Command{Op: kv.OpCAS, Client: b.Client, Seq: b.Seq, Key: key, From: *b.From, Value: *b.To})
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	key, ok := checkKey(w, r)
	if !ok {
		return
	}
	s.write(w, r, nil, kv.Command{Op: kv.OpDelete, Key: key})
}

// write applies cmd through the leader: proposed here if this node leads,
// otherwise forwarded to the leader through raft (raft.RawNode
// ForwardProposal), and answered here once applied; under the
// ack-before-commit and dirty-read bugs the original request is forwarded
// over HTTP instead.
func (s *Server) write(w http.ResponseWriter, r *http.Request, raw []byte, cmd kv.Command) {
	st := s.Status()
	if st.Role != "leader" {
		if st.Leader == "" || r.Header.Get(forwardedHeader) != "" {
			writeError(w, http.StatusServiceUnavailable, errNoLeader.Error())
			return
		}
		if s.bugs.ackBeforeCommit || s.bugs.dirtyRead {
			// Those planted bugs live in the leader's handling of a write:
			// a follower sends the whole request there, so that every
			// write meets them. Otherwise the loop forwards the command.
			s.forward(w, r, raw, st.Leader)
			return
		}
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	res, err := s.propose(ctx, cmd)
	switch {
	case err != nil:
		writeFailure(w, err)
	case res.OK:
		writeJSON(w, http.StatusOK, nodeapi.WriteResponse{})
	case res.Found:
		writeJSON(w, http.StatusConflict, nodeapi.MismatchResponse{Error: nodeapi.CASMismatch, Value: &res.Current})
	default:
		writeJSON(w, http.StatusConflict, nodeapi.MismatchResponse{Error: nodeapi.CASMismatch})
	}
}

// forward relays a write to the leader and copies its answer back. A
// failure to reach the leader means the write was not applied (503) unless
// the request may have been delivered (504).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, raw []byte, leader string) {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	addr, ok := s.members.clientAddr(leader)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("leader %s has no known client address; not applied", leader))
		return
	}
	url := "http://" + addr + r.URL.RequestURI()
	req, err := http.NewRequestWithContext(ctx, r.Method, url, bytes.NewReader(raw))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	req.Header.Set(forwardedHeader, s.cfg.Name)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.fwd.Do(req)
	if err != nil {
		writeError(w, http.StatusGatewayTimeout, fmt.Sprintf("forwarding to leader %s: %v; outcome unknown", leader, err))
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, io.LimitReader(resp.Body, maxBodyBytes))
}

func (s *Server) handleStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Status())
}
