package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
)

// MaxLineBytes bounds one line of history.jsonl. A set workload's final read
// is the longest line a test writes; 64 MiB holds millions of elements.
const MaxLineBytes = 64 << 20

// ParseError reports the line of history.jsonl that is wrong and why.
type ParseError struct {
	Line int // 1-based; 0 when the problem is the file as a whole
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Warning is a problem Parse recovered from.
type Warning struct {
	Line int
	Msg  string
}

func (w Warning) String() string { return fmt.Sprintf("line %d: %s", w.Line, w.Msg) }

// ErrEmpty is returned (wrapped in a ParseError) for a history without a
// single complete op.
var ErrEmpty = errors.New("history is empty: no complete op")

// Parse reads history.jsonl from r and validates it.
//
// A final line that has no newline and is not a JSON object is what a
// controller killed in the middle of a write leaves behind: it is skipped and
// reported as a Warning. Any other problem (a line that is not a JSON object,
// a missing or unknown field value, an op breaking the rules of a history)
// is a *ParseError naming the line. Operations still open at the end are
// kept: their outcome is unknown, and checkers treat them as info.
func Parse(r io.Reader) (History, []Warning, error) {
	var h History
	size, sized := sizeOf(r)
	warnings, err := scan(r, func(op *Op, line int, read int64) error {
		if sized && line == sampleLines {
			h = slices.Grow(h, estimateOps(size, read, line))
		}
		h = append(h, *op)
		return nil
	})
	if err != nil {
		return nil, warnings, err
	}
	return h, warnings, nil
}

// sampleLines is how many lines Parse reads before it sizes the history
// from the input's size: growing a slice of two million ops by appends
// alone copies it over and over, most of a large file's parse time.
const sampleLines = 4096

// sizeOf returns the size of r when it can tell (a file, a bytes or
// strings reader).
func sizeOf(r io.Reader) (int64, bool) {
	switch x := r.(type) {
	case interface{ Size() int64 }:
		return x.Size(), true
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := x.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size(), true
		}
	}
	return 0, false
}

// estimateOps is how many more ops a file of size bytes holds after lines
// lines took read bytes, with a tenth to spare.
func estimateOps(size, read int64, lines int) int {
	if read <= 0 || size <= read {
		return 0
	}
	return int(float64(size-read) / (float64(read) / float64(lines)) * 1.1)
}

// readLine returns the next line without its newline, and whether it ended
// with one. It returns io.EOF only when nothing is left.
func readLine(br *bufio.Reader) (line []byte, complete bool, err error) {
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			if long != nil {
				return append(long, chunk[:len(chunk)-1]...), true, nil
			}
			return chunk[:len(chunk)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if long == nil && !objectStart(chunk) {
				return nil, false, fmt.Errorf("a line of over %d bytes that is not a JSON object: it begins with %q", len(chunk), chunk[:min(len(chunk), 16)])
			}
			if len(long)+len(chunk) > MaxLineBytes {
				return nil, false, fmt.Errorf("line longer than %d bytes", MaxLineBytes)
			}
			long = append(long, chunk...)
		case errors.Is(err, io.EOF):
			long = append(long, chunk...)
			if len(long) == 0 {
				return nil, false, io.EOF
			}
			return long, false, nil
		default:
			return nil, false, fmt.Errorf("read: %w", err)
		}
	}
}

// objectStart reports whether b, the start of a line, begins as a JSON
// object does. A line that does not is wrong whatever follows, so a long
// one (a file of zeros, a binary) is refused without reading it whole.
func objectStart(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r")
	return len(b) == 0 || b[0] == '{'
}

// wireOp is an Op as decoded from JSON, with the required fields as pointers
// so that a missing one is told apart from a zero one.
type wireOp struct {
	Index   *int64          `json:"index"`
	Time    *int64          `json:"time"`
	Process *Process        `json:"process"`
	Type    *Type           `json:"type"`
	F       *string         `json:"f"`
	Key     string          `json:"key"`
	Value   json.RawMessage `json:"value"`
	Node    string          `json:"node"`
	Error   string          `json:"error"`
}

// decodeOp decodes one line. Field values are checked here; the rules that
// relate ops to each other are the Validator's.
func decodeOp(line []byte) (Op, error) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return Op{}, &syntaxError{err: errors.New("empty line, want a JSON object")}
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return Op{}, notJSON(json.Unmarshal(trimmed, new(any)))
		}
		return Op{}, errors.New("not a JSON object")
	}
	var w wireOp
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return Op{}, notJSON(err)
	}
	switch {
	case w.Index == nil:
		return Op{}, errors.New(`missing "index"`)
	case w.Time == nil:
		return Op{}, errors.New(`missing "time"`)
	case w.Process == nil:
		return Op{}, errors.New(`missing "process"`)
	case w.Type == nil:
		return Op{}, errors.New(`missing "type"`)
	case w.F == nil:
		return Op{}, errors.New(`missing "f"`)
	}
	return Op{Index: *w.Index, Time: *w.Time, Process: *w.Process, Type: *w.Type, F: *w.F,
		Key: w.Key, Value: w.Value, Node: w.Node, Error: w.Error}, nil
}

// syntaxError marks a line that is not JSON at all, as opposed to JSON with
// a bad field; only the former can be a torn write.
type syntaxError struct{ err error }

func (e *syntaxError) Error() string { return e.err.Error() }
func (e *syntaxError) Unwrap() error { return e.err }

func notJSON(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &syntaxError{err: fmt.Errorf("not JSON: %w", err)}
	}
	return err
}

func isSyntaxError(err error) bool {
	var se *syntaxError
	return errors.As(err, &se)
}
