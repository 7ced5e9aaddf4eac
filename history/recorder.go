package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// MaxFlushInterval is the longest a recorded op waits in memory before the
// recorder writes it out.
const MaxFlushInterval = 100 * time.Millisecond

// flushBytes is how much the recorder buffers before writing without
// waiting for the next tick.
const flushBytes = 64 << 10

// ErrClosed is returned when recording into a closed Recorder.
var ErrClosed = errors.New("recorder is closed")

// RecorderOptions tunes a Recorder. The zero value is what a test run wants.
type RecorderOptions struct {
	// FlushInterval is how often buffered lines are written out. Zero, or
	// anything above MaxFlushInterval, means MaxFlushInterval.
	FlushInterval time.Duration
	// Ticks, if not nil, replaces the flush timer: every value received
	// triggers a flush. Tests use it to drive flushing without real time.
	Ticks <-chan time.Time
	// PanicOnInvalid makes an op that breaks the rules of a history panic
	// instead of returning an error, so a test fails at the faulty call.
	PanicOnInvalid bool
	// Sink, if not nil, takes every op as it is recorded, in index order,
	// in place of the recorder's memory: Ops then returns none, and a long
	// run's history is held nowhere (a run checks it as it is recorded).
	// It is called under the recorder's lock, so it must not call the
	// recorder, and the op is Sink's only during the call.
	Sink func(*Op)
}

// Outcome is how an operation ended, as given to [Recorder.Complete].
type Outcome struct {
	Type  Type // OK, Fail or Info
	Value any  // see Recorder.Invoke for how values are encoded
	Node  string
	Error string
	// Unavailable says the node did not take the request at all: it
	// refused the connection or answered that it has no leader. It is not
	// recorded; the worker backs off before its next operation.
	Unavailable bool
}

// Pending is an operation the recorder saw invoked and not yet completed.
type Pending struct {
	Process int
	Index   int64 // index of the invoke in the history
	f, key  string
}

// Recorder records a history while a test runs. It is safe for concurrent
// use by any number of workers.
//
// Invariants: ops get consecutive indexes and are timestamped under one
// lock, so index order is time order; every op is checked by a Validator
// before it is recorded, and an op that breaks the rules is not recorded;
// lines reach the writer in index order, whole lines at a time, at most
// FlushInterval after they were recorded (or sooner, when 64 KiB are
// buffered). A process killed between two writes therefore leaves a prefix
// of the history, at worst with a torn final line if the writer itself
// splits a write.
//
// Timestamps are taken inside Invoke and Complete. Workers must call Invoke
// before sending a request and Complete after its response arrives, so that
// the recorded interval contains the real one.
type Recorder struct {
	clock func() time.Duration
	w     io.Writer
	panic bool

	mu     sync.Mutex
	v      Validator
	ops    History
	sink   func(*Op)
	count  int64 // ops recorded
	next   int   // a client process above every one recorded
	buf    []byte
	err    error // first write error, sticky
	closed bool

	stop chan struct{}
	done chan struct{}
}

// NewRecorder returns a recorder that streams history.jsonl to w, timing ops
// with clock (the time since the test started, from a monotonic clock). A
// nil w keeps the history in memory only. Close must be called to stop the
// flushing goroutine and write the last lines.
func NewRecorder(w io.Writer, clock func() time.Duration, opts RecorderOptions) *Recorder {
	r := &Recorder{clock: clock, w: w, panic: opts.PanicOnInvalid, sink: opts.Sink,
		stop: make(chan struct{}), done: make(chan struct{})}
	if w == nil {
		close(r.done)
		return r
	}
	ticks := opts.Ticks
	var ticker *time.Ticker
	if ticks == nil {
		interval := opts.FlushInterval
		if interval <= 0 || interval > MaxFlushInterval {
			interval = MaxFlushInterval
		}
		ticker = time.NewTicker(interval)
		ticks = ticker.C
	}
	go r.flushLoop(ticks, ticker)
	return r
}

func (r *Recorder) flushLoop(ticks <-chan time.Time, ticker *time.Ticker) {
	defer close(r.done)
	if ticker != nil {
		defer ticker.Stop()
	}
	for {
		select {
		case <-r.stop:
			return
		case <-ticks:
			r.mu.Lock()
			r.flushLocked()
			r.mu.Unlock()
		}
	}
}

// Invoke records that process starts operation f on key. value is encoded
// as JSON: nil is omitted, integers are written directly, a json.RawMessage
// is compacted onto one line, anything else goes through json.Marshal.
func (r *Recorder) Invoke(process int, f, key string, value any) (Pending, error) {
	if process < 0 {
		return Pending{}, r.refuse(fmt.Errorf("%w: process %d is negative", ErrInvalid, process))
	}
	raw, err := encodeValue(value)
	if err != nil {
		return Pending{}, fmt.Errorf("record invoke %q: %w", f, err)
	}
	op, err := r.record(Op{Process: Process(process), Type: Invoke, F: f, Key: key, Value: raw}, -1)
	if err != nil {
		return Pending{}, err
	}
	return Pending{Process: process, Index: op.Index, f: f, key: key}, nil
}

// Complete records how the operation p ended. An Info outcome retires the
// process: it may never invoke again.
func (r *Recorder) Complete(p Pending, o Outcome) error {
	if !o.Type.Completes() {
		return r.refuse(fmt.Errorf("%w: completion type %v, want ok, fail or info", ErrInvalid, o.Type))
	}
	raw, err := encodeValue(o.Value)
	if err != nil {
		return fmt.Errorf("record %v %q: %w", o.Type, p.f, err)
	}
	_, err = r.record(Op{Process: Process(p.Process), Type: o.Type, F: p.f, Key: p.key,
		Value: raw, Node: o.Node, Error: o.Error}, p.Index)
	return err
}

// Nemesis records a fault the nemesis injected or healed; value names the
// targets.
func (r *Recorder) Nemesis(f string, value any) error {
	raw, err := encodeValue(value)
	if err != nil {
		return fmt.Errorf("record nemesis %q: %w", f, err)
	}
	_, err = r.record(Op{Process: NemesisProcess, Type: Info, F: f, Value: raw}, -1)
	return err
}

// record stamps op with the next index and the current time, validates it,
// buffers its line and keeps it, or hands it to the sink. invoke is the
// index of the invoke a completion answers, or -1.
func (r *Recorder) record(op Op, invoke int64) (Op, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Op{}, ErrClosed
	}
	op.Index = r.count
	op.Time = int64(r.clock())
	if invoke >= 0 {
		if o, ok := r.v.open[op.Process]; ok && o.index != invoke {
			return Op{}, r.refuse(fmt.Errorf("%w: completion of op %d, but process %v's open op is %d",
				ErrInvalid, invoke, op.Process, o.index))
		}
	}
	if err := r.v.Add(&op); err != nil {
		return Op{}, r.refuse(fmt.Errorf("record op %d: %w", op.Index, err))
	}
	r.count++
	if !op.Process.IsNemesis() {
		r.next = max(r.next, int(op.Process)+1)
	}
	if r.w != nil {
		r.buf = op.appendJSON(r.buf)
		r.buf = append(r.buf, '\n')
		if len(r.buf) >= flushBytes {
			r.flushLocked()
		}
	}
	if r.sink != nil {
		r.sink(&op)
	} else {
		r.ops = append(r.ops, op)
	}
	return op, nil
}

// refuse returns err, or panics with it when the recorder was built to.
func (r *Recorder) refuse(err error) error {
	if r.panic {
		panic(err)
	}
	return err
}

// flushLocked writes the buffered lines. A write error is kept and reported
// by Err and Close; recording goes on, in memory or into the sink.
func (r *Recorder) flushLocked() {
	if len(r.buf) == 0 || r.err != nil {
		return
	}
	if _, err := r.w.Write(r.buf); err != nil {
		r.err = fmt.Errorf("write history: %w", err)
	}
	r.buf = r.buf[:0]
}

// Ops returns the history recorded so far; none when the recorder has a
// Sink. The slice is never modified by later recording and may be kept.
func (r *Recorder) Ops() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops[:len(r.ops):len(r.ops)]
}

// NextProcess returns a client process number above every one recorded.
func (r *Recorder) NextProcess() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// Err returns the first error writing the history out, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close stops the flushing goroutine, writes the remaining lines and, when w
// is a regular *os.File, syncs it to stable storage. It does not close w.
// Operations still open stay open in the history: their outcome is unknown.
// Close returns the first write or sync error; calling it again returns the
// same.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		defer r.mu.Unlock()
		return r.err
	}
	r.closed = true
	r.mu.Unlock()

	close(r.stop)
	<-r.done

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return nil
	}
	r.flushLocked()
	if f, ok := r.w.(*os.File); ok && r.err == nil {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if err := f.Sync(); err != nil {
				r.err = fmt.Errorf("sync history: %w", err)
			}
		}
	}
	return r.err
}

// encodeValue turns a recorded value into the JSON stored in Op.Value.
func encodeValue(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(nil, x, 10), nil
	case json.RawMessage:
		if len(x) == 0 {
			return nil, nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, x); err != nil {
			return nil, fmt.Errorf("value is not valid JSON: %w", err)
		}
		return b.Bytes(), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode value: %w", err)
	}
	return b, nil
}
