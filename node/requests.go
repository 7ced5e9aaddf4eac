package node

import (
	"context"
	"errors"

	"chaos/node/kv"
)

// Errors a client request can end with; http.go maps them to status codes.
var (
	// errNoLeader: no leader is known or this node stopped leading before
	// the request was appended. It was not applied (503).
	errNoLeader = errors.New("no leader")
	// errLost: another leader overwrote the entry; it was not applied (503).
	errLost = errors.New("entry overwritten by a new leader; not applied")
	// errLeaderChanged: a read lost the leader that was to confirm it (503).
	errLeaderChanged = errors.New("leader changed during read")
	// errTimeout: no answer in time; the outcome is unknown (504).
	errTimeout = errors.New("timed out; outcome unknown")
	// errStopping: the node is shutting down (503 for reads; writes may
	// still apply, so they answer 504).
	errStopping = errors.New("node is stopping")
)

// proposal is a write waiting for its entry to be applied.
type proposal struct {
	cmd  kv.Command
	data []byte
	done chan proposalResult // buffered: the loop never blocks on it
}

type proposalResult struct {
	res kv.Result
	err error
}

// readRequest is a linearizable read waiting for its read index.
type readRequest struct {
	key  string
	done chan readResult
}

type readResult struct {
	value string
	found bool
	err   error
}

// propose hands a write to the event loop and waits for its result.
func (s *Server) propose(ctx context.Context, cmd kv.Command) (kv.Result, error) {
	p := &proposal{cmd: cmd, data: cmd.Encode(nil), done: make(chan proposalResult, 1)}
	return handOver(s, ctx, s.propC, p, p.done)
}

// handOver sends v to the event loop on ch and waits for its answer on
// done: errNoLeader if it never reached the loop (not applied), errTimeout
// if the answer did not come in time (outcome unknown).
func handOver[T any](s *Server, ctx context.Context, ch chan<- T, v T, done <-chan proposalResult) (kv.Result, error) {
	select {
	case ch <- v:
	case <-ctx.Done():
		return kv.Result{}, errNoLeader
	case <-s.stopC:
		return kv.Result{}, errNoLeader
	}
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return kv.Result{}, errTimeout
	case <-s.stopC:
		return kv.Result{}, errTimeout
	}
}

// read performs a linearizable read through the event loop.
func (s *Server) read(ctx context.Context, key string) (string, bool, error) {
	r := &readRequest{key: key, done: make(chan readResult, 1)}
	select {
	case s.readC <- r:
	case <-ctx.Done():
		return "", false, errTimeout
	case <-s.stopC:
		return "", false, errStopping
	}
	select {
	case res := <-r.done:
		return res.value, res.found, res.err
	case <-ctx.Done():
		return "", false, errTimeout
	case <-s.stopC:
		return "", false, errStopping
	}
}
