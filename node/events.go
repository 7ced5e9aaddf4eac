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
// Writes are buffered and flushed by a timer and on close, so a killed node
// loses at most the last flush interval of events.
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
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
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

// Write is called by the slog handler with one whole line.
func (el *eventLog) Write(p []byte) (int, error) {
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.closed {
		return 0, os.ErrClosed
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
