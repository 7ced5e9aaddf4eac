package node

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"chaos/raft"
)

// diskWriter makes Readys durable on a goroutine of its own, in the order
// the event loop hands them over, so that a leader's loop goes on (steps
// acknowledgements, commits, applies, answers, builds its next batch)
// while its disk writes the last batch: raft.RawNode.AdvanceAsync. Appends
// queued meanwhile go to disk together, with one fsync.
//
// Two kinds of work, one queue: an append (a leader's SendFirst Ready:
// hard state and entries), which the loop does not wait for and learns is
// durable from notify and durable; and a step the loop waits for (every
// other Ready's persistence, a snapshot's), which runs after every append
// queued before it, so it never overtakes them.
type diskWriter struct {
	disk    *storage
	metrics *metrics
	work    chan writeJob
	// notify gets a signal (never blocking: one pending is enough) when
	// durable moved.
	notify chan struct{}
	// failed gets the error that ended the writer: the loop stops on it.
	failed chan error
	done   chan struct{}

	mu      sync.Mutex
	durable entryID // the last appended entry made durable
}

// entryID names a log entry.
type entryID struct{ index, term uint64 }

// writeJob is an append (step nil) or a step the loop waits for.
type writeJob struct {
	hs   raft.HardState
	ents []raft.Entry
	step func() error
	out  chan error
}

// errWriterFailed answers the steps queued behind a failed write.
var errWriterFailed = errors.New("an earlier write to disk failed")

// maxQueuedWrites bounds the appends in flight; the loop waits when the
// disk falls that far behind.
const maxQueuedWrites = 256

func newDiskWriter(disk *storage, m *metrics) *diskWriter {
	w := &diskWriter{disk: disk, metrics: m, work: make(chan writeJob, maxQueuedWrites),
		notify: make(chan struct{}, 1), failed: make(chan error, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// append queues a Ready's hard state and entries; durable says when they
// are on disk.
func (w *diskWriter) append(hs raft.HardState, ents []raft.Entry) {
	if len(ents) > 0 || !hs.IsEmpty() {
		w.work <- writeJob{hs: hs, ents: ents}
	}
}

// do runs step on the writer once every append queued before it is
// durable, and returns its error.
func (w *diskWriter) do(step func() error) error {
	out := make(chan error, 1)
	w.work <- writeJob{step: step, out: out}
	return <-out
}

// lastDurable is the last appended entry on disk (zero before the first).
func (w *diskWriter) lastDurable() entryID {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.durable
}

// close stops the writer once the queued work is done.
func (w *diskWriter) close() {
	close(w.work)
	<-w.done
}

func (w *diskWriter) run() {
	defer close(w.done)
	var next *writeJob
	for {
		job, ok := w.take(next)
		if !ok {
			return
		}
		next = nil
		if job.step != nil {
			job.out <- job.step()
			continue
		}
		batch := []writeJob{job}
		for next == nil && len(batch) < maxQueuedWrites {
			select {
			case j, ok := <-w.work:
				switch {
				case !ok:
				case j.step != nil:
					next = &j
				default:
					batch = append(batch, j)
					continue
				}
			default:
			}
			break
		}
		if err := w.write(batch); err != nil {
			w.failed <- err
			w.drain(next, fmt.Errorf("%w: %w", errWriterFailed, err))
			return
		}
	}
}

// take returns next if set, else the next job queued.
func (w *diskWriter) take(next *writeJob) (writeJob, bool) {
	if next != nil {
		return *next, true
	}
	j, ok := <-w.work
	return j, ok
}

// write makes a batch of appends durable with one fsync and moves durable.
func (w *diskWriter) write(batch []writeJob) error {
	start := time.Now()
	var hs raft.HardState
	var ents []raft.Entry
	for _, j := range batch {
		if !j.hs.IsEmpty() {
			hs = j.hs
		}
		ents = append(ents, j.ents...)
	}
	// One Ready's entries can replace a suffix of an earlier one's only
	// across a term change, which is never an append's: the batch is one
	// contiguous run of entries, and the last hard state holds for all.
	if err := w.disk.save(hs, ents); err != nil {
		return err
	}
	w.metrics.fsync.Observe(time.Since(start).Seconds())
	if n := len(ents); n > 0 {
		w.mu.Lock()
		w.durable = entryID{index: ents[n-1].Index, term: ents[n-1].Term}
		w.mu.Unlock()
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}
	return nil
}

// drain fails the steps still queued after a write failed with err, so
// that the loop waiting on one learns it, and discards the appends.
func (w *diskWriter) drain(next *writeJob, err error) {
	if next != nil && next.step != nil {
		next.out <- err
	}
	for j := range w.work {
		if j.step != nil {
			j.out <- err
		}
	}
}
