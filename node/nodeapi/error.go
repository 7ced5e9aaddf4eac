package nodeapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// maxMessageBytes bounds how much of a body that is not JSON an Error
// quotes as its message.
const maxMessageBytes = 512

// Error is an answer other than the 200 a request wanted (and, for
// RouteGet, other than 404). See the package documentation for what each
// status means.
type Error struct {
	Status int
	// Message is the body's "error"; when the body has none, the body
	// itself (trimmed, at most maxMessageBytes).
	Message string
	// Value is, in a 409 to RouteCAS, the key's current value; nil when the
	// key is absent or the body could not be decoded.
	Value *string
	// BodyErr says why the body could not be read or decoded as JSON; nil
	// when it was.
	BodyErr error
}

// Error is "status <code>", then ": <message>" when there is one.
func (e *Error) Error() string {
	s := "status " + strconv.Itoa(e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// answerError decodes the body of an unwanted answer. readErr is the
// failure to read the body, if any.
func answerError(status int, body []byte, readErr error) *Error {
	e := &Error{Status: status, BodyErr: readErr}
	var m MismatchResponse
	if e.BodyErr == nil {
		e.BodyErr = json.Unmarshal(body, &m)
	}
	e.Message, e.Value = m.Error, m.Value
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > maxMessageBytes {
			e.Message = e.Message[:maxMessageBytes] + "..."
		}
	}
	if e.BodyErr != nil {
		e.Value = nil
	}
	return e
}

// unreadable is the error of a 200 whose body could not be used.
func unreadable(err error) error { return fmt.Errorf("unreadable body: %w", err) }
