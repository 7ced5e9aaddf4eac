package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"chaos/internal/jsonline"
)

// Type is the kind of an history line: an invocation or one of the three
// completions. The zero value is not a valid type, so an op whose type was
// never set is caught by validation.
type Type uint8

const (
	Invoke Type = iota + 1 // an operation started
	OK                     // it happened
	Fail                   // it certainly did not happen
	Info                   // its outcome is unknown: it may take effect at any later time, or never
)

// ParseType returns the Type named s ("invoke", "ok", "fail" or "info").
func ParseType(s string) (Type, error) {
	for t := Invoke; t <= Info; t++ {
		if t.name() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q (want invoke, ok, fail or info)", s)
}

// name is the name history.jsonl uses for t, or "" for an invalid type.
func (t Type) name() string {
	switch t {
	case Invoke:
		return "invoke"
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Info:
		return "info"
	}
	return ""
}

// String returns the name history.jsonl uses for t.
func (t Type) String() string {
	if n := t.name(); n != "" {
		return n
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Completes reports whether t ends an operation (ok, fail or info).
func (t Type) Completes() bool { return t == OK || t == Fail || t == Info }

// MarshalJSON encodes t as its name; an invalid type is an error.
func (t Type) MarshalJSON() ([]byte, error) {
	if t < Invoke || t > Info {
		return nil, fmt.Errorf("marshal %v: not a valid type", t)
	}
	return strconv.AppendQuote(nil, t.name()), nil
}

// UnmarshalJSON accepts exactly the four type names.
func (t *Type) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("type must be a string, got %s", b)
	}
	parsed, err := ParseType(s)
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}

// Process identifies who performed an op: a client process (0, 1, ...) or
// the nemesis. In JSON a client process is an integer and the nemesis is the
// string "nemesis".
type Process int64

// NemesisProcess is the process of every fault the nemesis injects.
const NemesisProcess Process = -1

// IsNemesis reports whether p is the nemesis.
func (p Process) IsNemesis() bool { return p == NemesisProcess }

// String returns "nemesis" or the client process number.
func (p Process) String() string {
	if p.IsNemesis() {
		return "nemesis"
	}
	return strconv.FormatInt(int64(p), 10)
}

// MarshalJSON encodes a client process as an integer and the nemesis as
// "nemesis". Other negative values are not processes and fail to encode.
func (p Process) MarshalJSON() ([]byte, error) {
	if p < NemesisProcess {
		return nil, fmt.Errorf("marshal process %d: not a valid process", int64(p))
	}
	return p.appendJSON(nil), nil
}

func (p Process) appendJSON(b []byte) []byte {
	if p.IsNemesis() {
		return append(b, `"nemesis"`...)
	}
	return strconv.AppendInt(b, int64(p), 10)
}

// UnmarshalJSON accepts a non-negative integer or the string "nemesis".
func (p *Process) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte(`"nemesis"`)) {
		*p = NemesisProcess
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("process must be a non-negative integer or \"nemesis\", got %s", b)
	}
	*p = Process(n)
	return nil
}

// Op is one line of history.jsonl. Invocations and completions are separate
// ops; an operation is the pair (see [History.Pairs]).
//
// Value is kept as the JSON it was recorded as, because its shape depends on
// the workload: integers, null or [expected, new] for the register, integers
// and a sorted list for the set, anything for the nemesis. A nil Value and
// the JSON null both mean "no value".
type Op struct {
	Index   int64           `json:"index"`
	Time    int64           `json:"time"` // ns since the test started, controller's monotonic clock
	Process Process         `json:"process"`
	Type    Type            `json:"type"`
	F       string          `json:"f"`
	Key     string          `json:"key,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
	Node    string          `json:"node,omitempty"`  // the node that served the op
	Error   string          `json:"error,omitempty"` // why it failed or is unknown
}

// HasValue reports whether op carries a value other than null.
func (op *Op) HasValue() bool {
	return len(op.Value) > 0 && !bytes.Equal(op.Value, []byte("null"))
}

// MarshalJSON encodes op as one history.jsonl line without the newline,
// fields in the order docs/FORMATS.md shows them.
func (op Op) MarshalJSON() ([]byte, error) {
	if op.Type < Invoke || op.Type > Info {
		return nil, fmt.Errorf("marshal op %d: type %v is not valid", op.Index, op.Type)
	}
	if op.Process < NemesisProcess {
		return nil, fmt.Errorf("marshal op %d: process %d is not valid", op.Index, int64(op.Process))
	}
	if len(op.Value) > 0 && !json.Valid(op.Value) {
		return nil, fmt.Errorf("marshal op %d: value is not valid JSON", op.Index)
	}
	return op.appendJSON(nil), nil
}

// appendJSON appends op's JSON encoding to b. The caller guarantees that
// Type and Process are valid and that Value is valid JSON.
func (op *Op) appendJSON(b []byte) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, op.Index, 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, op.Time, 10)
	b = append(b, `,"process":`...)
	b = op.Process.appendJSON(b)
	b = append(b, `,"type":"`...)
	b = append(b, op.Type.name()...)
	b = append(b, `","f":`...)
	b = jsonline.AppendString(b, op.F)
	if op.Key != "" {
		b = append(b, `,"key":`...)
		b = jsonline.AppendString(b, op.Key)
	}
	if len(op.Value) > 0 {
		b = append(b, `,"value":`...)
		b = append(b, op.Value...)
	}
	if op.Node != "" {
		b = append(b, `,"node":`...)
		b = jsonline.AppendString(b, op.Node)
	}
	if op.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonline.AppendString(b, op.Error)
	}
	return append(b, '}')
}
