package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

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
	// The whole log is read first: its lines counted, the events are
	// decoded into a slice of their final size, never copied as it grows.
	data, err := readAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("events: %w", err)
	}
	d := newDecoder()
	var (
		events   = make([]Event, 0, bytes.Count(data, []byte{'\n'})+1)
		warnings []Warning
		torn     *tornLine // the last line, if it was torn
	)
lines:
	for line := 1; ; line++ {
		text, complete := data, false
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data, complete = data[:i+1], data[i+1:], true
		}
		if len(text) > maxEventLine {
			return nil, nil, fmt.Errorf("events line %d: longer than %d bytes", line, maxEventLine)
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			if !complete {
				break
			}
			continue
		}
		ev, perr := d.parseLine(text)
		switch {
		case torn != nil && (perr != nil || ev.Event != KindStart):
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
	ev, err := (&decoder{}).parseLine(text[i:])
	return ev, err == nil && ev.Event == KindStart
}

// ParseLine decodes one line and checks the fields every event has: time,
// node and event. It accepts any event name and role; Line is left zero.
func ParseLine(text []byte) (Event, error) { return (&decoder{}).parseLine(text) }

func (d *decoder) parseLine(text []byte) (Event, error) {
	ev, err := d.decode(text)
	if err != nil {
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

// readAll reads r to its end, in one allocation when its size is known
// (a file, or a reader with a Len method such as bytes.Reader).
func readAll(r io.Reader) ([]byte, error) {
	size := int64(-1)
	switch v := r.(type) {
	case interface{ Len() int }:
		size = int64(v.Len())
	case *os.File:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	if size < 0 {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
