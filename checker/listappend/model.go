package listappend

import (
	"fmt"
	"strings"
)

// Model is a consistency model a history is checked against.
type Model string

// The models. Each is defined by the anomalies it forbids (see [Forbids])
// and by the extra edges its dependency graph carries.
const (
	// StrictSerializable forbids every anomaly; its graph has realtime
	// edges: a transaction that completed before another was invoked must
	// come first.
	StrictSerializable Model = "strict-serializable"
	// Serializable forbids every anomaly, with no realtime edges.
	Serializable Model = "serializable"
	// StrongSessionSerializable is Serializable plus process edges: each
	// process sees its own transactions in the order it ran them.
	StrongSessionSerializable Model = "strong-session-serializable"
	// SnapshotIsolation forbids G0, G1 (a, b, c), G-single and
	// G-nonadjacent, and allows G2-item (write skew). G-nonadjacent is
	// forbidden because every cycle of a snapshot-isolated history has two
	// adjacent rw edges (Fekete et al. 2005; Cerone and Gotsman 2016).
	SnapshotIsolation Model = "snapshot-isolation"
	// ReadCommitted forbids G0, G1a, G1b and G1c only.
	ReadCommitted Model = "read-committed"
)

// Anomaly names. Cycle classes may carry a suffix saying which extra edge
// the cycle needs (G-single-realtime, G0-process).
const (
	G0                = "G0"
	G1a               = "G1a"
	G1b               = "G1b"
	G1c               = "G1c"
	GSingle           = "G-single"
	GNonadjacent      = "G-nonadjacent"
	G2Item            = "G2-item"
	IncompatibleOrder = "incompatible-order"
	DuplicateAppend   = "duplicate-append"
	DuplicateElements = "duplicate-elements"
	PhantomValue      = "phantom-value"
	Internal          = "internal"
	FracturedAppend   = "fractured-append"
	MalformedOp       = "malformed-op"
	MalformedTxn      = "malformed-txn"

	RealtimeSuffix = "-realtime"
	ProcessSuffix  = "-process"
)

// DefaultMaxSearchSteps bounds the cycle search in one strongly connected
// component when Options.MaxSearchSteps is 0: enough for components of tens
// of thousands of transactions, small enough to finish in seconds.
const DefaultMaxSearchSteps = 1 << 24

// Options says what to check a history against.
type Options struct {
	// Model is the consistency model; "" means StrictSerializable.
	Model Model
	// ProcessOrder adds process edges to any model (StrongSessionSerializable
	// always has them).
	ProcessOrder bool
	// MaxSearchSteps bounds, per strongly connected component, the edges
	// the cycle searches may follow; past it what is left undecided makes
	// the verdict Unknown. 0 means DefaultMaxSearchSteps.
	MaxSearchSteps int
}

// resolve returns o with its defaults filled in, or an error naming an
// unknown model.
func (o Options) resolve() (Options, error) {
	if o.Model == "" {
		o.Model = StrictSerializable
	}
	switch o.Model {
	case StrictSerializable, Serializable, StrongSessionSerializable, SnapshotIsolation, ReadCommitted:
	default:
		return o, fmt.Errorf("listappend: unknown model %q", o.Model)
	}
	if o.MaxSearchSteps <= 0 {
		o.MaxSearchSteps = DefaultMaxSearchSteps
	}
	return o, nil
}

// realtime reports whether the model's graph has realtime edges.
func (o Options) realtime() bool { return o.Model == StrictSerializable }

// process reports whether the graph has process edges.
func (o Options) process() bool {
	return o.ProcessOrder || o.Model == StrongSessionSerializable
}

// Forbids reports whether model m forbids the anomaly named name.
//
// A cycle class with the realtime suffix is forbidden only by
// StrictSerializable, and then exactly when its base class is; one with the
// process suffix is forbidden when its base class is (process edges exist
// only when asked for). Anomalies that break the input's own contract or
// show a value that cannot exist (incompatible-order, duplicate-append,
// duplicate-elements, phantom-value, internal, fractured-append, malformed
// input) are forbidden by every model, as is any name this package does
// not know.
func Forbids(m Model, name string) bool {
	base := name
	if b, ok := strings.CutSuffix(name, RealtimeSuffix); ok {
		if m != StrictSerializable {
			return false
		}
		base = b
	} else if b, ok := strings.CutSuffix(name, ProcessSuffix); ok {
		base = b
	}
	switch base {
	case GSingle, GNonadjacent:
		return m != ReadCommitted
	case G2Item:
		return m != ReadCommitted && m != SnapshotIsolation
	default:
		return true
	}
}
