package watch

import (
	"cmp"
	"fmt"
	"strings"
)

// Verdict is a three-valued verdict. The zero value is Unknown, so a
// verdict nobody set never reads as valid.
type Verdict int8

// The verdicts.
const (
	// Unknown: nothing was found against the server, but either nothing
	// could be checked (no session delivered anything) or part of the input
	// was malformed and left out. It never means "valid".
	Unknown Verdict = iota
	// Valid: something was checked, every check decided, and no anomaly
	// was found.
	Valid
	// Invalid: at least one anomaly against the server was found.
	Invalid
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
	Valid Verdict
	// Anomalies are sorted by kind, watcher, session, revision, key and
	// detail: the same history always gives the same list.
	Anomalies []Anomaly
	// Kinds are the distinct kinds in Anomalies, sorted.
	Kinds []Kind
	Stats Stats
}

// Stats count what the checker saw and decided.
type Stats struct {
	Sessions  int // sessions checked (well formed)
	Watchers  int // distinct watchers among them
	Responses int // responses received
	Events    int // events delivered, counting duplicates
	Progress  int // progress notifications received
	// Cancellations counts responses that canceled a watch.
	Cancellations int
	// ReferenceRevisions and ReferenceEvents count the revisions and
	// (revision, key) events the reference knows.
	ReferenceRevisions int
	ReferenceEvents    int
	// Obligations counts (session, reference event) pairs a session was
	// required to deliver; each was decided.
	Obligations int
}

// Anomaly is one anomaly. Watcher and Session are -1 when the anomaly is
// about no session (a conflict between acknowledged writes, a malformed
// write or compaction); Revision and Key are 0 and "" when it is about no
// revision or key.
type Anomaly struct {
	Kind     Kind
	Watcher  int
	Session  int
	Revision int64
	Key      string
	Detail   string
}

// Explain returns the anomaly as one English sentence led by its kind and
// the property it breaks.
func (a Anomaly) Explain() string {
	return fmt.Sprintf("%s (%s): %s", a.Kind, a.Kind.Property(), a.Detail)
}

// compareAnomalies is a total order on anomalies, for a deterministic
// result.
func compareAnomalies(a, b Anomaly) int {
	return cmp.Or(
		strings.Compare(string(a.Kind), string(b.Kind)),
		cmp.Compare(a.Watcher, b.Watcher),
		cmp.Compare(a.Session, b.Session),
		cmp.Compare(a.Revision, b.Revision),
		strings.Compare(a.Key, b.Key),
		strings.Compare(a.Detail, b.Detail),
	)
}
