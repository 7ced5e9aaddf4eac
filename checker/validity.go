package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Validity is a three-valued verdict. The zero value is Unknown, so a
// verdict nobody set can never read as valid.
type Validity int8

const (
	Unknown Validity = iota // could not decide: "unknown" in JSON
	Valid                   // decided, no anomaly: true
	Invalid                 // an anomaly was found: false
)

// String returns the verdict as results.json writes it.
func (v Validity) String() string {
	switch v {
	case Valid:
		return "true"
	case Invalid:
		return "false"
	default:
		return "unknown"
	}
}

// MarshalJSON encodes Valid as true, Invalid as false and anything else as
// "unknown".
func (v Validity) MarshalJSON() ([]byte, error) {
	if v == Valid || v == Invalid {
		return []byte(v.String()), nil
	}
	return []byte(`"unknown"`), nil
}

// UnmarshalJSON accepts true, false and "unknown".
func (v *Validity) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		*v = Valid
	case "false":
		*v = Invalid
	case `"unknown"`:
		*v = Unknown
	default:
		return fmt.Errorf("validity must be true, false or \"unknown\", got %s", b)
	}
	return nil
}

// Merge combines verdicts as Jepsen does: false beats unknown, which beats
// true. Merging nothing is Unknown: no check, no verdict.
func Merge(vs ...Validity) Validity {
	if len(vs) == 0 {
		return Unknown
	}
	merged := Valid
	for _, v := range vs {
		switch {
		case v == Invalid:
			return Invalid
		case v != Valid:
			merged = Unknown
		}
	}
	return merged
}

// Result is one checker's output: its verdict, and details that depend on
// the checker (*LinearizableDetails, *SetDetails or *StatsDetails). In JSON
// the details' fields sit beside "valid" in one object, as results.json
// shows them.
type Result struct {
	Valid   Validity
	Details any // must marshal to a JSON object, or be nil
}

// MarshalJSON writes {"valid": ..., <fields of Details>}.
func (r Result) MarshalJSON() ([]byte, error) {
	valid, err := r.Valid.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out := append([]byte(`{"valid":`), valid...)
	if r.Details == nil {
		return append(out, '}'), nil
	}
	details, err := json.Marshal(r.Details)
	if err != nil {
		return nil, fmt.Errorf("marshal details: %w", err)
	}
	details = bytes.TrimSpace(details)
	if len(details) < 2 || details[0] != '{' {
		return nil, fmt.Errorf("details marshal to %.20s, want a JSON object", details)
	}
	if inner := bytes.TrimSpace(details[1 : len(details)-1]); len(inner) > 0 {
		out = append(append(out, ','), inner...)
	}
	return append(out, '}'), nil
}
