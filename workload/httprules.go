package workload

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"chaos/db/described"
	"chaos/history"
)

// classifyAnswer is the outcome of operation op (described.OpRead, ...)
// that got status and body: the first rule that matches says ok, fail or
// info, and for an ok read where the value is. An answer no rule matches
// is info, never ok, and so is an ok read whose value cannot be read.
func classifyAnswer(op string, rules []described.Rule, status int, body []byte) history.Outcome {
	doc, _ := described.Decode(body) // nil when the body is not JSON: field rules do not match
	for i, r := range rules {
		if !ruleMatches(r, status, body, doc) {
			continue
		}
		out := history.Outcome{Type: ruleType(r.Type), Unavailable: r.Unavailable}
		if out.Type != history.OK {
			out.Error = fmt.Sprintf("%s: HTTP %d: %s (answer rule %d)", op, status, clip(body), i+1)
			return out
		}
		if op != described.OpRead && op != described.OpSetRead {
			return out
		}
		v, err := ruleValue(op, r, doc)
		if err != nil {
			return history.Outcome{Type: history.Info, Error: fmt.Sprintf("%s: HTTP %d: %v (answer rule %d): %s", op, status, err, i+1, clip(body))}
		}
		out.Value = v
		return out
	}
	return history.Outcome{Type: history.Info, Error: fmt.Sprintf("%s: HTTP %d matches no answer rule; outcome unknown: %s", op, status, clip(body))}
}

// ruleMatches reports whether r matches an answer (see described.Rule).
func ruleMatches(r described.Rule, status int, body []byte, doc any) bool {
	if len(r.Status) > 0 && !slices.Contains(r.Status, status) {
		return false
	}
	if !r.Field.IsSet() {
		return r.Contains == "" || bytes.Contains(body, []byte(r.Contains))
	}
	if doc == nil {
		return false
	}
	for _, v := range r.Field.Get(doc) {
		text := described.Text(v)
		if (r.Equals == nil || text == *r.Equals) && strings.Contains(text, r.Contains) {
			return true
		}
	}
	return false
}

func ruleType(t string) history.Type {
	switch t {
	case "ok":
		return history.OK
	case "fail":
		return history.Fail
	}
	return history.Info
}

// ruleValue reads an ok read's value: a *int64 for a register read (nil
// when the field is absent, or the rule names none), the sorted elements
// for set_read.
func ruleValue(op string, r described.Rule, doc any) (any, error) {
	if op == described.OpSetRead {
		elements := []int64{}
		if doc == nil {
			return nil, fmt.Errorf("the answer is not JSON")
		}
		for _, v := range r.Value.Get(doc) {
			n, err := ruleInt(v, r.Base64)
			if err != nil {
				return nil, err
			}
			elements = append(elements, n)
		}
		slices.Sort(elements)
		return elements, nil
	}
	if !r.Value.IsSet() {
		return (*int64)(nil), nil
	}
	if doc == nil {
		return nil, fmt.Errorf("the answer is not JSON")
	}
	vals := r.Value.Get(doc)
	if len(vals) == 0 {
		return (*int64)(nil), nil
	}
	n, err := ruleInt(vals[0], r.Base64)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// ruleInt reads a value as a decimal integer, base64-decoding it first
// when b64.
func ruleInt(v any, b64 bool) (int64, error) {
	text := described.Text(v)
	if b64 {
		raw, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return 0, fmt.Errorf("value %.40q is not base64", text)
		}
		text = string(raw)
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("value %.40q is not a decimal integer", text)
	}
	return n, nil
}

// clip is the start of an answer's body, for an error.
func clip(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
