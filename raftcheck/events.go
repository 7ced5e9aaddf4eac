package raftcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Event is one line of a chaos-node events.jsonl. Fields an event kind does
// not carry are zero.
type Event struct {
	Time   time.Time `json:"time"`
	Node   string    `json:"node"`
	Event  string    `json:"event"`            // start, stop, role, vote, commit, apply, snapshot, restore, ...
	Role   string    `json:"role,omitempty"`   // role: follower, pre-candidate, candidate, leader
	Leader string    `json:"leader,omitempty"` // role: the leader the node knows, "" for none
	For    string    `json:"for,omitempty"`    // vote: the candidate voted for
	Hash   string    `json:"hash,omitempty"`   // apply: hash of the entry's command
	Term   uint64    `json:"term,omitempty"`   // start, role, vote: the node's term; apply, snapshot, restore: the entry's
	Index  uint64    `json:"index,omitempty"`  // commit, apply, snapshot, restore
	Line   int       `json:"line"`             // 1-based line in the file it was read from
}

// Warning is a problem ReadEvents recovered from.
type Warning struct {
	Line int    `json:"line"`
	Msg  string `json:"msg"`
}

// String returns the warning as "line N: message".
func (w Warning) String() string { return fmt.Sprintf("line %d: %s", w.Line, w.Msg) }

// maxEventLine bounds one events.jsonl line; real lines are ~150 bytes.
const maxEventLine = 1 << 20

// ReadEvents reads one events.jsonl, in file order, each event's Line set.
//
// A torn line, the beginning of an event line cut short, is what a node
// killed (or a machine crashed) in the middle of a write leaves behind: it
// is skipped and reported as a Warning when it ends a life, that is when it
// is the last line, when the next line is a start event, or when a start
// event follows it on the same line (the next life appended to it; older
// chaos-nodes did not end a torn line before starting). Blank lines are
// skipped. Any other bad line (not a JSON object, no time, node or event,
// a torn line in the middle of a life) is an error naming the line.
func ReadEvents(r io.Reader) ([]Event, []Warning, error) {
	br := bufio.NewReaderSize(r, maxEventLine)
	var (
		events   []Event
		warnings []Warning
		torn     *tornLine // the last line, if it was torn
	)
lines:
	for line := 1; ; line++ {
		text, err := br.ReadSlice('\n')
		complete := err == nil
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, nil, fmt.Errorf("events line %d: longer than %d bytes", line, br.Size())
		case err != nil && !errors.Is(err, io.EOF):
			return nil, nil, fmt.Errorf("events line %d: %w", line, err)
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			if !complete {
				break
			}
			continue
		}
		ev, perr := parseEvent(text)
		switch {
		case torn != nil && (perr != nil || ev.Event != "start"):
			return nil, nil, fmt.Errorf("events line %d: %w (a torn line in the middle of a life)", torn.line, torn.err)
		case torn != nil:
			warnings = append(warnings, torn.warning())
			torn = nil
		case perr != nil && isTorn(text, perr):
			torn = &tornLine{line: line, size: len(text), err: perr}
			if ev, ok := startAfterTorn(text); ok {
				warnings = append(warnings, torn.warning())
				torn = nil
				ev.Line = line
				events = append(events, ev)
			}
			if !complete {
				break lines
			}
			continue
		case perr != nil:
			return nil, nil, fmt.Errorf("events line %d: %w", line, perr)
		}
		ev.Line = line
		events = append(events, ev)
		if !complete {
			break
		}
	}
	if torn != nil {
		warnings = append(warnings, torn.warning())
	}
	return events, warnings, nil
}

// eventStart is how every event line begins.
const eventStart = `{"time":"`

// tornLine is a line that is the beginning of an event line cut short.
type tornLine struct {
	line, size int
	err        error
}

func (t *tornLine) warning() Warning {
	return Warning{Line: t.line, Msg: fmt.Sprintf("torn line skipped (%d bytes): the end of a killed life", t.size)}
}

// isTorn reports whether text, which failed to parse with err, looks like
// an event line cut short: it is not valid JSON and begins like an event
// line (or is cut within that beginning).
func isTorn(text []byte, err error) bool {
	var syn *json.SyntaxError
	start := []byte(eventStart)
	return errors.As(err, &syn) && (bytes.HasPrefix(text, start) || bytes.HasPrefix(start, text))
}

// startAfterTorn finds a start event appended to a torn line.
func startAfterTorn(text []byte) (Event, bool) {
	i := bytes.LastIndex(text, []byte(eventStart))
	if i <= 0 {
		return Event{}, false
	}
	ev, err := parseEvent(text[i:])
	return ev, err == nil && ev.Event == "start"
}

// parseEvent decodes one line and checks the fields every event has.
func parseEvent(text []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(text, &ev); err != nil {
		return ev, err
	}
	switch {
	case ev.Time.IsZero():
		return ev, errors.New("no time")
	case ev.Node == "":
		return ev, errors.New("no node")
	case ev.Event == "":
		return ev, errors.New("no event")
	}
	return ev, nil
}

// LoadRunEvents reads runDir/nodes/*/events.jsonl and merges them into one
// slice sorted by time; events with equal times keep file order, files in
// node-directory order. Torn lines that end a life (see [ReadEvents]) are
// skipped, each said in a warning naming the file and line. A run without
// any event log is an error wrapping
// os.ErrNotExist; a bad line is an error naming the file and line.
//
// Times come from each node's own clock, so under clock faults the merged
// order across nodes is approximate; [Raft] relies on file order within a
// node (Line), not on the merged order.
func LoadRunEvents(runDir string) ([]Event, []string, error) {
	paths, err := filepath.Glob(filepath.Join(runDir, "nodes", "*", "events.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	if len(paths) == 0 {
		return nil, nil, fmt.Errorf("%s: no nodes/*/events.jsonl: %w", runDir, os.ErrNotExist)
	}
	slices.Sort(paths)
	var (
		all      []Event
		warnings []string
	)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, nil, err
		}
		events, warns, err := ReadEvents(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		all = append(all, events...)
		for _, w := range warns {
			warnings = append(warnings, fmt.Sprintf("%s: %s", p, w))
		}
	}
	slices.SortStableFunc(all, func(a, b Event) int { return a.Time.Compare(b.Time) })
	return all, warnings, nil
}
