// Package workload drives concurrent clients against a system under test and
// records what they saw: generators of operations (register, set), a
// runner of workers with a rate limit and a time limit, and one Client per
// system under test (chaos-node over its HTTP API, etcd over its v3 JSON
// gateway).
package workload

import (
	"context"
	"strconv"
	"strings"

	"chaos/history"
)

// Op is one operation a worker asks a client to perform.
//
//   - read (register): Key; the outcome's Value is *int64, nil when absent.
//   - write: Key, Value int64 (unique per test).
//   - cas: Key, Value [2]int64{expected, new}; Fail when the current value differs
//     or the key is absent.
//   - add (set): Value int64 (unique per test).
//   - read (set, the final read): Key is empty; the outcome's Value is the
//     sorted []int64 of elements present. Attempted lists every element ever
//     added, for clients whose store cannot enumerate the set.
type Op struct {
	F         string // history.FRead, history.FWrite, history.FCAS or history.FAdd
	Key       string
	Value     any
	Attempted []int64
	// Width, if positive, pads a write's value with leading zeros to
	// Width characters (a benchmark's value size, see ValueText); the
	// text still reads back as the same integer.
	Width int
}

// ValueText is the text a client writes for value v of op: its decimal
// digits, padded with leading zeros to op.Width characters.
func (op Op) ValueText(v int64) string {
	s := strconv.FormatInt(v, 10)
	if pad := op.Width - len(s); pad > 0 && v >= 0 {
		return strings.Repeat("0", pad) + s
	}
	return s
}

// Client performs operations against one node of a system under test. Do
// must classify its result honestly (docs/FORMATS.md):
//
//   - history.OK: the operation certainly happened;
//   - history.Fail: it certainly did not happen (a refused request, a cas
//     mismatch, no leader);
//   - history.Info: unknown (a timeout, a lost connection, a 5xx that may
//     have applied). Reads may answer Fail instead, as they change nothing.
//
// Whatever the type, Do sets the outcome's Unavailable when the node did
// not take the request at all (the connection was refused, it answered
// that it has no leader or is not ready): the worker then backs off before
// its next operation (see Backoff), which is the only retry policy a
// client needs.
//
// Do returns when ctx is done at the latest. The outcome's Node names the
// node that served the request. A Client is used by one worker at a time.
type Client interface {
	Do(ctx context.Context, op Op) history.Outcome
	Close() error
}
