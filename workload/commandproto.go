package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"chaos/history"
)

// The client command protocol (README, "Your own system"): one JSON
// request per line on the command's stdin, one JSON answer per line on its
// stdout, in order.

// commandRequest is one request line.
//
//	{"id":1,"f":"read","key":"k1","timeout_ms":980}
//	{"id":2,"f":"write","key":"k1","value":3,"timeout_ms":980}
//	{"id":3,"f":"cas","key":"k1","value":[3,4],"timeout_ms":980}
//	{"id":4,"f":"add","key":"","value":7,"timeout_ms":980}
//	{"id":5,"f":"read","key":"","attempted":[1,2,7],"timeout_ms":29000}
type commandRequest struct {
	ID        uint64  `json:"id"`
	F         string  `json:"f"`
	Key       string  `json:"key"`
	Value     any     `json:"value,omitempty"`
	Attempted []int64 `json:"attempted,omitempty"`
	// TimeoutMS is how long chaos waits for the answer; a client should
	// answer info (or fail, for a read) on its own before then.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// commandAnswer is one answer line: {"id":1,"type":"ok","value":3}, or
// fail or info with "error", and "unavailable":true when the node did not
// take the request.
type commandAnswer struct {
	ID          *uint64         `json:"id"`
	Type        string          `json:"type"`
	Value       json.RawMessage `json:"value"`
	Error       string          `json:"error"`
	Unavailable bool            `json:"unavailable"`
}

// newCommandRequest encodes op as request id, with the time left before
// deadline (none when zero).
func newCommandRequest(id uint64, op Op, deadline time.Time, now time.Time) ([]byte, error) {
	req := commandRequest{ID: id, F: op.F, Key: op.Key, Value: op.Value}
	if op.F == history.FRead && op.Key == "" {
		req.Attempted = op.Attempted
		if req.Attempted == nil {
			req.Attempted = []int64{}
		}
	}
	if !deadline.IsZero() {
		req.TimeoutMS = max(deadline.Sub(now).Milliseconds(), 1)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// parseCommandAnswer decodes the answer line to request id of op. An
// error says why the line is not a valid answer.
func parseCommandAnswer(line []byte, id uint64, op Op) (history.Outcome, error) {
	var a commandAnswer
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&a); err != nil {
		return history.Outcome{}, fmt.Errorf("not a JSON object: %v", err)
	}
	switch {
	case a.ID == nil:
		return history.Outcome{}, errors.New(`no "id"`)
	case *a.ID != id:
		return history.Outcome{}, fmt.Errorf(`"id" %d, but the request in flight is %d`, *a.ID, id)
	}
	out := history.Outcome{Error: a.Error, Unavailable: a.Unavailable}
	switch a.Type {
	case "ok":
		out.Type = history.OK
	case "fail":
		out.Type = history.Fail
		return out, nil
	case "info":
		out.Type = history.Info
		return out, nil
	default:
		return history.Outcome{}, fmt.Errorf(`"type" %q: want ok, fail or info`, a.Type)
	}
	if op.F != history.FRead {
		return out, nil // writes, cas and adds carry no value back
	}
	v, err := answerValue(a.Value, op.Key == "")
	if err != nil {
		return history.Outcome{}, err
	}
	out.Value = v
	return out, nil
}

// answerValue is an ok read's value: an integer or null (a register
// read), or a list of integers (the set's final read), sorted.
func answerValue(raw json.RawMessage, set bool) (any, error) {
	if set {
		var elements []int64
		if err := json.Unmarshal(raw, &elements); err != nil || elements == nil {
			return nil, fmt.Errorf(`a final read's "value" must be a list of integers, not %.40s`, raw)
		}
		slices.Sort(elements)
		return elements, nil
	}
	if len(raw) == 0 || string(raw) == "null" {
		return (*int64)(nil), nil
	}
	var v int64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf(`a read's "value" must be an integer or null, not %.40s`, raw)
	}
	return &v, nil
}
