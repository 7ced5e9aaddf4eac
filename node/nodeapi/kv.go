package nodeapi

// WriteRequest is the body of RoutePut (Value) and RouteCAS (From and To).
// Client and Seq are optional: a write that carries them is applied once
// even when it is retried, the node remembering each client's last seq.
// The node refuses unknown fields and values over its limit.
type WriteRequest struct {
	Value  *string `json:"value,omitempty"`
	From   *string `json:"from,omitempty"`
	To     *string `json:"to,omitempty"`
	Client uint64  `json:"client"`
	Seq    uint64  `json:"seq"`
}

// WriteID names a write for the node's deduplication: the writer and its
// sequence number, the Client and Seq of WriteRequest.
type WriteID struct {
	Client, Seq uint64
}

// ValueResponse is the body of a 200 to RouteGet: the key's value. Value is
// a pointer so that a body without one can be told from an empty value.
type ValueResponse struct {
	Value *string `json:"value"`
}

// WriteResponse is the body of a 200 to a write: "{}".
type WriteResponse struct{}

// ErrorResponse is the body of every answer but a 200 and a 409.
type ErrorResponse struct {
	Error string `json:"error"`
}

// CASMismatch is the Error of a cas whose key held another value.
const CASMismatch = "cas mismatch"

// MismatchResponse is the body of a 409 to RouteCAS: Error is CASMismatch
// and Value the key's current value, null when the key is absent.
type MismatchResponse struct {
	Error string  `json:"error"`
	Value *string `json:"value"`
}

// Status is the body of a 200 to RouteStatus: the node's view of the
// cluster. Leader is "" when the node knows of none.
type Status struct {
	ID        string `json:"id"`
	Role      string `json:"role"` // "leader", "follower", "pre-candidate" or "candidate"
	Term      uint64 `json:"term"`
	Leader    string `json:"leader"`
	Commit    uint64 `json:"commit"`
	Applied   uint64 `json:"applied"`
	LastIndex uint64 `json:"last_index"`
	// Abstaining: the node neither votes nor campaigns, having lost
	// records it had made durable, until a leader has caught it up.
	Abstaining bool `json:"abstaining,omitempty"`
}
