package listappend

// Verdict is a three-valued verdict. The zero value is Unknown, so a
// verdict nobody set never reads as valid.
type Verdict int8

// The verdicts.
const (
	Unknown Verdict = iota // something the model forbids was left undecided
	Valid                  // every search decided and found nothing forbidden
	Invalid                // an anomaly the model forbids was found
)

// String returns "true", "false" or "unknown".
func (v Verdict) String() string {
	switch v {
	case Valid:
		return "true"
	case Invalid:
		return "false"
	default:
		return "unknown"
	}
}

// Result is what [Check] found.
type Result struct {
	// Valid is the verdict under Model.
	Valid Verdict
	// Model is the model the verdict is for.
	Model Model
	// Anomalies are every anomaly found, forbidden by Model or not, sorted
	// by name, then by the transactions involved.
	Anomalies []Anomaly
	// AnomalyTypes are the distinct names in Anomalies, sorted.
	AnomalyTypes []string
	// Undecided names the cycle classes a bounded search gave up on, one
	// entry per class and component ("G-single near T12"); they make the
	// verdict Unknown when Model forbids them and nothing forbidden was
	// found.
	Undecided []string
	// Txns, Nodes and Edges count the transactions checked, the
	// transactions in the dependency graph, and its edges (realtime edges
	// counted as stored: through time barriers, see realtime.go).
	Txns, Nodes, Edges int
	// Components is the number of strongly connected components of more
	// than one transaction: each holds at least one cycle.
	Components int
}

// Anomaly is one anomaly. Txns holds the Index of each transaction
// involved: for a cycle, in cycle order starting from its smallest Index;
// otherwise the transaction that observed the anomaly first, then the
// others. Steps is set for cycles only; Key and Value name the key and
// value an anomaly without a cycle is about, when it is about one.
type Anomaly struct {
	Name   string
	Txns   []int
	Steps  []Step
	Key    string
	Value  int64
	Detail string
}

// EdgeKind is the kind of a dependency between two transactions.
type EdgeKind uint8

// The edge kinds.
const (
	WW       EdgeKind = iota // To appended the value right after From's, in the key's version order
	WR                       // To read a list ending with the value From appended
	RW                       // From read a list To's append was the next version of
	Realtime                 // From completed before To was invoked
	Process                  // From and To ran one after the other on one process
	barrier                  // internal: an edge into or out of a time barrier
)

// String returns the edge kind as anomaly explanations name it.
func (k EdgeKind) String() string {
	switch k {
	case WW:
		return "ww"
	case WR:
		return "wr"
	case RW:
		return "rw"
	case Realtime:
		return "realtime"
	case Process:
		return "process"
	default:
		return "barrier"
	}
}

// Step is one edge of a cycle: From must precede To, for the reason Kind
// and the fields below give.
//
//   - WW: on Key, To appended ToValue directly after From's FromValue.
//   - WR: on Key, To read ReadLen elements, the last being FromValue, which
//     From appended.
//   - RW: on Key, From read ReadLen elements (the last FromValue when
//     ReadLen > 0), and To appended ToValue, the next version.
//   - Realtime: From completed at Completed, before To was invoked at
//     Invoked.
//   - Process: From and To ran one after the other on process Proc.
type Step struct {
	From, To           int
	Kind               EdgeKind
	Key                string
	FromValue, ToValue int64
	ReadLen            int
	Completed, Invoked int64
	Proc               int
}
