package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock advances by one microsecond every time it is read.
type fakeClock struct {
	mu  sync.Mutex
	now time.Duration
}

func (c *fakeClock) read() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += time.Microsecond
	return c.now
}

// signalWriter hands every write to a channel, so a test can wait for a
// flush without sleeping.
type signalWriter struct{ writes chan []byte }

func (w *signalWriter) Write(p []byte) (int, error) {
	w.writes <- append([]byte(nil), p...)
	return len(p), nil
}

// manualRecorder returns a recorder flushed only when the test ticks.
func manualRecorder(t *testing.T) (*Recorder, *signalWriter, chan time.Time) {
	t.Helper()
	w := &signalWriter{writes: make(chan []byte, 100)}
	ticks := make(chan time.Time)
	clock := &fakeClock{}
	r := NewRecorder(w, clock.read, RecorderOptions{Ticks: ticks})
	t.Cleanup(func() { _ = r.Close() })
	return r, w, ticks
}

func TestRecorderWritesWhatItRecords(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{}
	r := NewRecorder(&buf, clock.read, RecorderOptions{PanicOnInvalid: true})
	p, err := r.Invoke(0, "write", "k1", 3)
	require.NoError(t, err)
	require.NoError(t, r.Nemesis("start-partition", map[string][]string{"n1": {"n4", "n5"}}))
	q, err := r.Invoke(1, "cas", "k1", []int64{3, 4})
	require.NoError(t, err)
	require.NoError(t, r.Complete(p, Outcome{Type: OK, Value: 3, Node: "n2"}))
	require.NoError(t, r.Complete(q, Outcome{Type: Info, Error: "timeout"}))
	_, err = r.Invoke(2, "read", "k1", json.RawMessage(" null "))
	require.NoError(t, err)
	require.NoError(t, r.Close())

	want := `{"index":0,"time":1000,"process":0,"type":"invoke","f":"write","key":"k1","value":3}
{"index":1,"time":2000,"process":"nemesis","type":"info","f":"start-partition","value":{"n1":["n4","n5"]}}
{"index":2,"time":3000,"process":1,"type":"invoke","f":"cas","key":"k1","value":[3,4]}
{"index":3,"time":4000,"process":0,"type":"ok","f":"write","key":"k1","value":3,"node":"n2"}
{"index":4,"time":5000,"process":1,"type":"info","f":"cas","key":"k1","error":"timeout"}
{"index":5,"time":6000,"process":2,"type":"invoke","f":"read","key":"k1","value":null}
`
	assert.Equal(t, want, buf.String())
	parsed, warnings, err := Parse(&buf)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, r.Ops(), parsed)
}

func TestRecorderRefusesBrokenRules(t *testing.T) {
	r := NewRecorder(nil, (&fakeClock{}).read, RecorderOptions{})
	p, err := r.Invoke(0, "write", "k", 1)
	require.NoError(t, err)
	_, err = r.Invoke(0, "read", "k", nil)
	assert.ErrorIs(t, err, ErrInvalid, "two open ops")
	require.NoError(t, r.Complete(p, Outcome{Type: Info}))
	_, err = r.Invoke(0, "read", "k", nil)
	assert.ErrorContains(t, err, "retired", "a retired process invokes")
	assert.ErrorIs(t, r.Complete(p, Outcome{Type: OK}), ErrInvalid, "completed twice")
	_, err = r.Invoke(-1, "read", "k", nil)
	assert.ErrorIs(t, err, ErrInvalid)

	q, err := r.Invoke(1, "read", "k", nil)
	require.NoError(t, err)
	assert.ErrorIs(t, r.Complete(q, Outcome{Type: Invoke}), ErrInvalid, "an invoke is no completion")
	stale := Pending{Process: 1, Index: q.Index - 1, f: "read", key: "k"}
	assert.ErrorContains(t, r.Complete(stale, Outcome{Type: OK}), "open op is")
	_, err = r.Invoke(2, "write", "k", func() {})
	assert.ErrorContains(t, err, "encode value")
	_, err = r.Invoke(2, "write", "k", json.RawMessage("{"))
	assert.ErrorContains(t, err, "not valid JSON")

	require.NoError(t, Validate(r.Ops()), "refused ops are not recorded")
	assert.Len(t, r.Ops(), 3)
	require.NoError(t, r.Close())
	_, err = r.Invoke(5, "read", "k", nil)
	assert.ErrorIs(t, err, ErrClosed)
}

func TestRecorderPanicsInTests(t *testing.T) {
	r := NewRecorder(nil, (&fakeClock{}).read, RecorderOptions{PanicOnInvalid: true})
	_, err := r.Invoke(0, "read", "k", nil)
	require.NoError(t, err)
	assert.PanicsWithError(t,
		`record op 1: invalid history: process 0 invokes "read" while its op 0 ("read") is still open`,
		func() { _, _ = r.Invoke(0, "read", "k", nil) })
	// The lock was released on the way out: the recorder still works.
	_, err = r.Invoke(1, "read", "k", nil)
	assert.NoError(t, err)
}

func TestRecorderFlushesOnTick(t *testing.T) {
	r, w, ticks := manualRecorder(t)
	_, err := r.Invoke(0, "read", "k", nil)
	require.NoError(t, err)
	select {
	case b := <-w.writes:
		t.Fatalf("wrote %q before any tick", b)
	default:
	}
	ticks <- time.Time{}
	line := <-w.writes
	assert.Equal(t, `{"index":0,"time":1000,"process":0,"type":"invoke","f":"read","key":"k"}`+"\n", string(line))

	ticks <- time.Time{} // nothing new: no empty write
	require.NoError(t, r.Close())
	select {
	case b := <-w.writes:
		t.Fatalf("unexpected write %q", b)
	default:
	}
}

func TestRecorderFlushesWholeLinesWhenBufferFills(t *testing.T) {
	r, w, _ := manualRecorder(t)
	for i := 0; ; i++ {
		p, err := r.Invoke(i, "write", "k", i)
		require.NoError(t, err)
		require.NoError(t, r.Complete(p, Outcome{Type: OK, Value: i}))
		select {
		case b := <-w.writes:
			require.GreaterOrEqual(t, len(b), flushBytes)
			require.Equal(t, byte('\n'), b[len(b)-1], "writes end at a line boundary")
			h, warnings, err := Parse(bytes.NewReader(b))
			require.NoError(t, err)
			require.Empty(t, warnings)
			assert.Equal(t, r.Ops()[:len(h)], h)
			return
		default:
		}
	}
}

func TestRecorderCloseSyncsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	r := NewRecorder(f, (&fakeClock{}).read, RecorderOptions{Ticks: make(chan time.Time)})
	_, err = r.Invoke(0, "read", "k", nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close twice")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h, _, err := Parse(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, r.Ops(), h)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRecorderKeepsRecordingAfterWriteError(t *testing.T) {
	ticks := make(chan time.Time)
	r := NewRecorder(failingWriter{}, (&fakeClock{}).read, RecorderOptions{Ticks: ticks})
	_, err := r.Invoke(0, "read", "k", nil)
	require.NoError(t, err)
	ticks <- time.Time{}
	ticks <- time.Time{} // the flush for the first tick has finished
	assert.ErrorContains(t, r.Err(), "write history: disk full")
	_, err = r.Invoke(1, "read", "k", nil)
	require.NoError(t, err, "the history is still kept in memory")
	assert.Len(t, r.Ops(), 2)
	assert.ErrorContains(t, r.Close(), "disk full")
}

func TestRecorderOpsIsASnapshot(t *testing.T) {
	r := NewRecorder(nil, (&fakeClock{}).read, RecorderOptions{})
	_, err := r.Invoke(0, "read", "k", nil)
	require.NoError(t, err)
	snap := r.Ops()
	for i := 1; i < 100; i++ {
		_, err := r.Invoke(i, "read", "k", nil)
		require.NoError(t, err)
	}
	assert.Len(t, snap, 1)
	assert.Len(t, append(snap, Op{}), 2, "appending to a snapshot cannot touch the recorder")
	assert.Len(t, r.Ops(), 100)
}

func TestRecorderConcurrentWorkers(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{}
	r := NewRecorder(&buf, clock.read, RecorderOptions{PanicOnInvalid: true})
	const workers, each = 20, 300
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			process := w
			for i := 0; i < each; i++ {
				p, err := r.Invoke(process, "write", "k", w*each+i)
				if err != nil {
					t.Error(err)
					return
				}
				out := Outcome{Type: OK}
				if i%50 == 49 {
					out.Type = Info
				}
				if err := r.Complete(p, out); err != nil {
					t.Error(err)
					return
				}
				if out.Type == Info {
					process += workers // the worker goes on as a new process
				}
			}
		}()
		if w%5 == 0 {
			require.NoError(t, r.Nemesis("kill", []string{"n1"}))
		}
	}
	wg.Wait()
	require.NoError(t, r.Close())
	h := r.Ops()
	assert.Len(t, h, workers*each*2+4)
	require.NoError(t, Validate(h))
	parsed, _, err := Parse(&buf)
	require.NoError(t, err)
	assert.Equal(t, h, parsed)
}

// A recorder with a sink hands it every op it records, in order, as it
// writes it, and keeps none: a run's history is held nowhere. An op it
// refuses reaches neither.
func TestRecorderSinkTakesEveryOpInsteadOfMemory(t *testing.T) {
	var buf bytes.Buffer
	var sunk History
	r := NewRecorder(&buf, (&fakeClock{}).read, RecorderOptions{Sink: func(op *Op) { sunk = append(sunk, *op) }})
	p, err := r.Invoke(3, "write", "k1", 3)
	require.NoError(t, err)
	require.NoError(t, r.Nemesis("kill", []string{"n1"}))
	_, err = r.Invoke(3, "read", "k1", nil)
	require.ErrorIs(t, err, ErrInvalid, "process 3 has an open op")
	require.NoError(t, r.Complete(p, Outcome{Type: OK, Value: 3}))
	assert.Equal(t, 4, r.NextProcess())
	require.NoError(t, r.Close())
	assert.Empty(t, r.Ops())
	parsed, _, err := Parse(&buf)
	require.NoError(t, err)
	assert.Equal(t, parsed, sunk)
	assert.Equal(t, []int64{0, 1, 2}, []int64{sunk[0].Index, sunk[1].Index, sunk[2].Index})
}
