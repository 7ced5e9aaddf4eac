package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Warning is a problem ReadEvents recovered from.
type Warning struct {
	Line int    `json:"line"`
	Msg  string `json:"msg"`
}

// String returns the warning as "line N: message".
func (w Warning) String() string { return fmt.Sprintf("line %d: %s", w.Line, w.Msg) }

// maxEventLine bounds one events.jsonl line; real lines are ~150 bytes.
// It is also what bounds the memory a hostile file can make ReadEvents
// take beyond its events: a file of zeros (/dev/zero, a sparse file) is
// refused after its first maxEventLine bytes.
const maxEventLine = 1 << 20

// ReadEvents reads one events.jsonl, in file order, each event's Line set.
// It reads the file as [ScanEvents] does and returns its events.
func ReadEvents(r io.Reader) ([]Event, []Warning, error) {
	var events []Event
	warnings, err := scanEvents(r, func(e *Event) error {
		events = append(events, *e)
		return nil
	}, scanOptions{grow: func(more int) { events = slices.Grow(events, more) }})
	if err != nil {
		return nil, nil, err
	}
	return events, warnings, nil
}

// ScanEvents reads one events.jsonl and gives each event to fn, in file
// order, its Line set; the event is fn's only until fn returns. It reads
// line by line and stops at the first bad line or error of fn, never
// holding more of the input than one line: a log of any length is read
// in the memory of one event.
//
// A torn line, the beginning of an event line cut short, is what a node
// killed (or a machine crashed) in the middle of a write leaves behind: it
// is skipped and reported as a Warning when it ends a life, that is when it
// is the last line, when the next line is a start event, or when a start
// event follows it on the same line (the next life appended to it; older
// chaos-nodes did not end a torn line before starting). Blank lines are
// skipped. Any other bad line (not a JSON object, no time, node or event,
// a torn line in the middle of a life, a line over 1 MiB) is an error
// naming the line; the events before it have been given to fn.
func ScanEvents(r io.Reader, fn func(*Event) error) ([]Warning, error) {
	return scanEvents(r, fn, scanOptions{})
}

// scanOptions tune scanEvents.
type scanOptions struct {
	// grow, when not nil, is told once, after sampleLines lines, how many
	// more lines the input likely holds.
	grow func(more int)
	// kinds, when not nil, are the kinds of the events fn is given; a line
	// that skips says is of another kind is not decoded.
	kinds []Kind
}

// scanEvents is ScanEvents with o.
func scanEvents(r io.Reader, fn func(*Event) error, o scanOptions) ([]Warning, error) {
	lr := newLineReader(r)
	d := newDecoder()
	var (
		warnings []Warning
		torn     *tornLine // the last line, if it was torn
		ev       Event     // the event given to fn, one variable for all
		perr     error
	)
	for line := 1; ; line++ {
		text, complete, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("events line %d: %w", line, err)
		}
		if line == sampleLines && o.grow != nil {
			o.grow(lr.estimateLines(line))
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 || (torn == nil && o.skips(text)) {
			continue
		}
		ev, perr = d.parseLine(text)
		switch {
		case torn != nil && (perr != nil || ev.Event != KindStart):
			return nil, fmt.Errorf("events line %d: %w (a torn line in the middle of a life)", torn.line, torn.err)
		case torn != nil:
			warnings = append(warnings, torn.warning())
			torn = nil
		case perr != nil && isTorn(text, perr):
			torn = &tornLine{line: line, size: len(text), err: perr}
			if ev, ok := startAfterTorn(text); ok {
				warnings = append(warnings, torn.warning())
				torn = nil
				ev.Line = line
				if err := o.give(fn, &ev); err != nil {
					return nil, err
				}
			}
			continue
		case perr != nil:
			return nil, fmt.Errorf("events line %d: %w", line, perr)
		}
		ev.Line = line
		if err := o.give(fn, &ev); err != nil {
			return nil, err
		}
		if !complete {
			break
		}
	}
	if torn != nil {
		warnings = append(warnings, torn.warning())
	}
	return warnings, nil
}

// give hands e to fn when it is of a kind fn is given.
func (o *scanOptions) give(fn func(*Event) error, e *Event) error {
	if o.kinds != nil && !slices.Contains(o.kinds, e.Event) {
		return nil
	}
	return fn(e)
}

// skips reports whether the line text, which follows no torn line, need
// not be decoded: it ends as a whole line does and its first "event"
// field names, without escapes, a kind fn is not given. A bad line that
// skips so is not noticed; a torn one does not end so, and is.
func (o *scanOptions) skips(text []byte) bool {
	if o.kinds == nil || text[len(text)-1] != '}' {
		return false
	}
	const key = `"event":"`
	i := bytes.Index(text, []byte(key))
	if i < 0 {
		return false
	}
	kind := text[i+len(key):]
	end := bytes.IndexByte(kind, '"')
	if end < 0 || bytes.IndexByte(kind[:end], '\\') >= 0 {
		return false
	}
	kind = kind[:end]
	for _, k := range o.kinds {
		if string(kind) == string(k) {
			return false
		}
	}
	return true
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

// sampleLines is how many lines ReadEvents reads before it sizes its
// slice of events from the input's size: growing the slice of a long log
// by appends alone copies it over and over.
const sampleLines = 4096

// lineReader reads lines of at most maxEventLine bytes.
type lineReader struct {
	br   *bufio.Reader
	size int64 // of the input, -1 when unknown
	read int64 // bytes read so far
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{br: bufio.NewReaderSize(r, 64<<10), size: -1}
	switch v := r.(type) {
	case interface{ Len() int }:
		lr.size = int64(v.Len())
	case *os.File:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			lr.size = st.Size()
		}
	}
	return lr
}

// next returns the next line without its newline, and whether it ended
// with one; the line is valid until the next call. It returns io.EOF only
// when nothing is left.
func (lr *lineReader) next() (line []byte, complete bool, err error) {
	lr.long = lr.long[:0]
	for {
		chunk, err := lr.br.ReadSlice('\n')
		lr.read += int64(len(chunk))
		complete := err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		switch {
		case complete && len(lr.long) == 0:
			line = chunk
		case complete, errors.Is(err, io.EOF):
			lr.long = append(lr.long, chunk...)
			line = lr.long
		case errors.Is(err, bufio.ErrBufferFull):
			if len(lr.long)+len(chunk) > maxEventLine {
				return nil, false, errLongLine
			}
			lr.long = append(lr.long, chunk...)
			continue
		default:
			return nil, false, err
		}
		switch {
		case len(line) > maxEventLine:
			return nil, false, errLongLine
		case !complete && len(line) == 0:
			return nil, false, io.EOF
		}
		return line, complete, nil
	}
}

// errLongLine is lineReader's error for a line over maxEventLine bytes.
var errLongLine = fmt.Errorf("longer than %d bytes", maxEventLine)

// estimateLines is how many more lines the input holds after lines lines,
// judging by their length, with a tenth to spare; 0 when its size is
// unknown.
func (lr *lineReader) estimateLines(lines int) int {
	if lr.size <= lr.read || lr.read == 0 {
		return 0
	}
	return int(float64(lr.size-lr.read) / (float64(lr.read) / float64(lines)) * 1.1)
}
