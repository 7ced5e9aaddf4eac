package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"chaos/control"
	"chaos/eventlog"
)

// EventTail is how many of a log's newest lines a look at it reads: a
// busy node writes a few hundred a second, and the targeted faults look
// every few milliseconds for a vote just cast.
const EventTail = 200

// TailEvents reads the newest EventTail lines of the event log at path on
// r's host, oldest first; a line that is not a whole event (the node is
// writing it) is left out.
func TailEvents(ctx context.Context, r control.Remote, path string) ([]eventlog.Event, error) {
	out, err := control.Output(ctx, r, fmt.Sprintf("tail -n %d %s", EventTail, control.ShellQuote(path)))
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return parseEventLines(out), nil
}

// parseEventLines reads the lines of an event log's tail.
func parseEventLines(b []byte) []eventlog.Event {
	var evs []eventlog.Event
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		var e eventlog.Event
		if len(line) > 0 && json.Unmarshal(line, &e) == nil && e.Event != "" {
			evs = append(evs, e)
		}
	}
	return evs
}
