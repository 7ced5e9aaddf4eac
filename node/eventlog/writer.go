package eventlog

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Writer appends a node's events to its events.jsonl: every line has time
// (RFC 3339, nanoseconds), event and node, then the fields of the event's
// kind. Writes are buffered and flushed by a timer, on demand and on
// close, so a killed node loses at most the last flush interval of events;
// the file only ever receives whole lines, so a killed node leaves no torn
// line (one a crashed machine left is ended with a newline on open).
type Writer struct {
	mu     sync.Mutex
	file   *os.File
	buf    *bufio.Writer
	h      slog.Handler
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
	w := &Writer{file: f, buf: bufio.NewWriterSize(f, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	w.h = slog.NewJSONHandler(lines{w}, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey:
			return slog.String("time", a.Value.Time().UTC().Format(time.RFC3339Nano))
		case slog.MessageKey:
			return slog.String("event", a.Value.String())
		case slog.LevelKey:
			return slog.Attr{}
		}
		return a
	}}).WithAttrs([]slog.Attr{slog.String("node", node)})
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
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	r := slog.NewRecord(t, slog.LevelInfo, string(e.Event), 0)
	r.AddAttrs(e.attrs()...)
	_ = w.h.Handle(context.Background(), r)
}

// attrs returns the fields e's kind carries, in the order they are written.
func (e Event) attrs() []slog.Attr {
	var (
		role    = slog.String("role", string(e.Role))
		leader  = slog.String("leader", e.Leader)
		term    = slog.Uint64("term", e.Term)
		vote    = slog.String("for", e.For)
		index   = slog.Uint64("index", e.Index)
		hash    = slog.String("hash", e.Hash)
		entries = slog.Int("entries", e.Entries)
		bugs    = slog.String("bugs", e.Bugs)
	)
	switch e.Event {
	case KindStart:
		return []slog.Attr{term, entries, bugs}
	case KindStop:
		return nil
	case KindRole:
		return []slog.Attr{role, term, leader}
	case KindVote:
		return []slog.Attr{term, vote}
	case KindCommit:
		return []slog.Attr{index}
	case KindApply:
		return []slog.Attr{index, term, hash}
	case KindSnapshot, KindRestore:
		return []slog.Attr{index, term}
	case KindConf:
		return []slog.Attr{index, term, slog.String("change", e.Change),
			slog.String("voters", e.Voters), slog.String("learners", e.Learners)}
	}
	var out []slog.Attr
	for _, a := range []slog.Attr{role, leader, term, vote, index, hash, entries, bugs} {
		if !isZero(a.Value) {
			out = append(out, a)
		}
	}
	return out
}

// isZero reports whether v is its kind's zero value.
func isZero(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindString:
		return v.String() == ""
	case slog.KindUint64:
		return v.Uint64() == 0
	case slog.KindInt64:
		return v.Int64() == 0
	}
	return false
}

// lines is the io.Writer the slog handler writes to: one whole line a call.
type lines struct{ w *Writer }

// Write is called by the slog handler with one whole line. A line that
// does not fit in the buffer's free space is preceded by a flush, so the
// buffer is only ever written out at a line boundary.
func (l lines) Write(p []byte) (int, error) {
	w := l.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, os.ErrClosed
	}
	if len(p) > w.buf.Available() && w.buf.Buffered() > 0 {
		if err := w.buf.Flush(); err != nil {
			return 0, err
		}
	}
	return w.buf.Write(p)
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
