package node

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

// eventLog writes the node's protocol events (CONTRACT.md) as JSON lines to
// events.jsonl: every line has time (RFC 3339, nanoseconds), node and event.
// Writes are buffered and flushed by a timer, on demand and on close, so a
// killed node loses at most the last flush interval of events; the file
// only ever receives whole lines, so a killed node leaves no torn line
// (one a crashed machine left is ended with a newline on open).
type eventLog struct {
	mu     sync.Mutex
	file   *os.File
	buf    *bufio.Writer
	log    *slog.Logger
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

const eventFlushInterval = 50 * time.Millisecond

func openEventLog(dir, node string) (*eventLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("event log: %w", err)
	}
	el := &eventLog{file: f, buf: bufio.NewWriterSize(f, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	h := slog.NewJSONHandler(el, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey:
			return slog.String("time", a.Value.Time().UTC().Format(time.RFC3339Nano))
		case slog.MessageKey:
			return slog.String("event", a.Value.String())
		case slog.LevelKey:
			return slog.Attr{}
		}
		return a
	}})
	el.log = slog.New(h).With("node", node)
	go el.flushLoop()
	return el, nil
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

// Write is called by the slog handler with one whole line. A line that
// does not fit in the buffer's free space is preceded by a flush, so the
// buffer is only ever written out at a line boundary.
func (el *eventLog) Write(p []byte) (int, error) {
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.closed {
		return 0, os.ErrClosed
	}
	if len(p) > el.buf.Available() && el.buf.Buffered() > 0 {
		if err := el.buf.Flush(); err != nil {
			return 0, err
		}
	}
	return el.buf.Write(p)
}

func (el *eventLog) flushLoop() {
	defer close(el.done)
	t := time.NewTicker(eventFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-el.stop:
			return
		case <-t.C:
			el.flush()
		}
	}
}

// emit records one event with its attributes.
func (el *eventLog) emit(event string, attrs ...slog.Attr) {
	el.log.LogAttrs(context.Background(), slog.LevelInfo, event, attrs...)
}

// flush writes the buffered events to the file now. It does not sync: what
// it wrote survives the process being killed, not the machine crashing.
func (el *eventLog) flush() {
	el.mu.Lock()
	defer el.mu.Unlock()
	if !el.closed {
		_ = el.buf.Flush()
	}
}

// close flushes, syncs and closes the file.
func (el *eventLog) close() error {
	close(el.stop)
	<-el.done
	el.mu.Lock()
	defer el.mu.Unlock()
	el.closed = true
	err := el.buf.Flush()
	if serr := el.file.Sync(); err == nil {
		err = serr
	}
	if cerr := el.file.Close(); err == nil {
		err = cerr
	}
	return err
}
