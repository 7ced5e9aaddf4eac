package eventlog

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Writer appends a node's events to its events.jsonl: every line has time
// (RFC 3339, UTC, nanoseconds), event and node, then the fields of the
// event's kind (encode.go). Writes are buffered and flushed by a timer, on
// demand and on close, so a killed node loses at most the last flush
// interval of events; the file only ever receives whole lines, so a killed
// node leaves no torn line (one a crashed machine left is ended with a
// newline on open).
type Writer struct {
	node string

	mu     sync.Mutex
	file   *os.File
	buf    *bufio.Writer
	line   []byte // the line being encoded, reused
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// FlushInterval is how often buffered events are written out.
const FlushInterval = 50 * time.Millisecond

// Open opens (creating it if need be) dir/events.jsonl for appending the
// events of node, and starts the periodic flush. Close stops it.
func Open(dir, node string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("event log: %w", err)
	}
	w := &Writer{node: node, file: f, buf: bufio.NewWriterSize(f, 64<<10),
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.flushLoop()
	return w, nil
}

// endLine appends a newline to f when its last byte is not one: the torn
// last line of an earlier life then stays a line of its own instead of
// swallowing this life's first event.
func endLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// Emit records e: its kind and the fields that kind carries, at e.Time, or
// now when e.Time is zero. The node is the one the Writer was opened for;
// e.Node and e.Line are ignored. An event of a kind this package does not
// name is written with its non-zero fields. After Close, events are
// dropped.
func (w *Writer) Emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.line = e.appendLine(w.line[:0], w.node)
	// A line that does not fit in the buffer's free space is preceded by a
	// flush, so the buffer is only ever written out at a line boundary.
	if len(w.line) > w.buf.Available() && w.buf.Buffered() > 0 {
		if err := w.buf.Flush(); err != nil {
			return
		}
	}
	_, _ = w.buf.Write(w.line)
}

func (w *Writer) flushLoop() {
	defer close(w.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Flush()
		}
	}
}

// Flush writes the buffered events to the file now. It does not sync: what
// it wrote survives the process being killed, not the machine crashing.
// A node flushes after a vote or a role change and before any message
// that shows it leaves, so that a kill cannot lose that evidence.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		_ = w.buf.Flush()
	}
}

// Close flushes, syncs and closes the file.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	err := w.buf.Flush()
	if serr := w.file.Sync(); err == nil {
		err = serr
	}
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	return err
}
