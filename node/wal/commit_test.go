package wal

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitPending yields until n records wait in w's pending batch.
func waitPending(t *testing.T, w *WAL, n int) {
	t.Helper()
	for {
		w.mu.Lock()
		got := 0
		if w.pending != nil {
			got = len(w.pending.spans)
		}
		w.mu.Unlock()
		require.LessOrEqual(t, got, n)
		if got == n {
			return
		}
		runtime.Gosched()
	}
}

func TestCallersArrivingDuringFsyncShareOneFsync(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{})
	syncsBefore := w.Stats().Syncs // creating the first segment fsynced it
	inSync, release := make(chan struct{}), make(chan struct{})
	var syncs atomic.Int32
	w.syncFile = func(f *os.File) error {
		if syncs.Add(1) == 1 {
			close(inSync)
			<-release
		}
		return f.Sync()
	}

	first := make(chan error, 1)
	go func() { first <- w.Save(entry(1)) }()
	<-inSync // the first Save is inside its fsync and owns the files

	const callers = 20
	errs := make(chan error, callers)
	for i := range callers {
		go func() { errs <- w.Save(entry(uint64(i + 2))) }()
	}
	waitPending(t, w, callers)
	select {
	case err := <-errs:
		t.Fatalf("a Save returned before its fsync: %v", err)
	default:
	}
	close(release)

	require.NoError(t, <-first)
	for range callers {
		require.NoError(t, <-errs)
	}
	st := w.Stats()
	assert.Equal(t, uint64(callers+1), st.Records)
	assert.Equal(t, syncsBefore+2, st.Syncs, "one fsync for the first call, one for all that waited")
	assert.Equal(t, int32(2), syncs.Load())

	_, got, _ := reopen(t, w, Options{})
	assert.Len(t, got, callers+1)
}

func TestConcurrentSavesAreAllDurable(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 16 << 10}
	w, _, _ := openRead(t, dir, opts)

	const writers, saves = 32, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*saves)
	for g := range writers {
		wg.Go(func() {
			for i := range saves {
				// Two records per call, to check a call's records stay together.
				a := Record{Type: entryType, Index: uint64(g*1000 + 2*i + 1), Data: fmt.Appendf(nil, "g%d-%d-a", g, i)}
				b := Record{Type: entryType, Index: a.Index + 1, Data: fmt.Appendf(nil, "g%d-%d-b", g, i)}
				errs <- w.Save(a, b)
			}
		})
	}
	// An observer races Stats and Compact against the writers. Compact(0)
	// deletes nothing: every segment holds entries.
	done := make(chan struct{})
	var observer sync.WaitGroup
	var compactErr error
	observer.Go(func() {
		for compactErr == nil {
			select {
			case <-done:
				return
			default:
				_ = w.Stats()
				compactErr = w.Compact(0)
				runtime.Gosched()
			}
		}
	})
	wg.Wait()
	close(done)
	observer.Wait()
	require.NoError(t, compactErr)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	st := w.Stats()
	require.Equal(t, uint64(writers*saves*2), st.Records)
	assert.Less(t, st.Syncs, st.Records, "group commit must have shared fsyncs")
	t.Logf("%d records, %d fsyncs, %d segments", st.Records, st.Syncs, st.Segments)

	_, got, _ := reopen(t, w, opts)
	require.Len(t, got, writers*saves*2)
	next := make([]int, writers) // next save number expected per writer
	for i := 0; i < len(got); i += 2 {
		a, b := got[i], got[i+1]
		g := int(a.Index / 1000)
		require.Equal(t, fmt.Sprintf("g%d-%d-a", g, next[g]), string(a.Data))
		require.Equal(t, fmt.Sprintf("g%d-%d-b", g, next[g]), string(b.Data))
		next[g]++
	}
	for g := range writers {
		assert.Equal(t, saves, next[g], "writer %d", g)
	}
}

func TestCloseWaitsForQueuedSaves(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{})
	inSync, release := make(chan struct{}), make(chan struct{})
	var syncs atomic.Int32
	w.syncFile = func(f *os.File) error {
		if syncs.Add(1) == 1 {
			close(inSync)
			<-release
		}
		return f.Sync()
	}
	first := make(chan error, 1)
	go func() { first <- w.Save(entry(1)) }()
	<-inSync
	second := make(chan error, 1)
	go func() { second <- w.Save(entry(2)) }()
	waitPending(t, w, 1)

	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	waitState(t, w, stateClosing)
	require.ErrorIs(t, w.Save(entry(3)), ErrClosed, "no new Save once Close began")
	close(release)

	require.NoError(t, <-first)
	require.NoError(t, <-second, "a Save queued before Close is written")
	require.NoError(t, <-closed)
	_, got, _ := openRead(t, dir, Options{})
	requireSameRecords(t, entries(1, 2), got)
}

// waitState yields until w reaches state s.
func waitState(t *testing.T, w *WAL, s walState) {
	t.Helper()
	for {
		w.mu.Lock()
		got := w.state
		w.mu.Unlock()
		if got == s {
			return
		}
		runtime.Gosched()
	}
}

// TestWriteIsQueuedForTheNextSave: records of Write are not written on
// their own: the next Save writes them with its records and one fsync
// covers both; a copy of the directory taken in between (a process crash:
// what the files hold) has the Saved records and not the queued ones;
// Sync writes and fsyncs queued records; Close writes them, cutting a
// segment if they need one.
func TestWriteIsQueuedForTheNextSave(t *testing.T) {
	dir := t.TempDir()
	size := int64(encodedSize(entry(1)))
	opts := Options{SegmentBytes: 3 * size}
	w, _, _ := openRead(t, dir, opts)
	var syncs atomic.Int32
	w.syncFile = func(f *os.File) error { syncs.Add(1); return f.Sync() }

	before := w.Stats().Bytes
	require.NoError(t, w.Write(entry(1)))
	assert.Equal(t, before, w.Stats().Bytes, "Write wrote its record at once")
	assert.False(t, w.disk.dirty)
	require.NoError(t, w.Save(entry(2)))
	assert.EqualValues(t, 1, syncs.Load(), "one fsync covers the Write before the Save")
	assert.Equal(t, before+2*size, w.Stats().Bytes)
	assert.False(t, w.disk.dirty)

	require.NoError(t, w.Write(entry(3)))
	crashed := copyDir(t, dir)
	_, got, _ := openRead(t, crashed, opts)
	requireSameRecords(t, []Record{entry(1), entry(2)}, got)

	require.NoError(t, w.Sync())
	assert.EqualValues(t, 2, syncs.Load(), "Sync did not fsync the record it wrote")
	assert.Equal(t, before+3*size, w.Stats().Bytes)

	// entry(4) needs a new segment: Close writes it, cutting one.
	require.NoError(t, w.Write(entry(4)))
	require.Len(t, segmentFiles(t, dir), 1)
	require.NoError(t, w.Close())
	require.Len(t, segmentFiles(t, dir), 2)
	_, got, _ = openRead(t, dir, opts)
	requireSameRecords(t, []Record{entry(1), entry(2), entry(3), entry(4)}, got)
}

// TestWriteAfterAFailureIsRefused: a WAL whose write failed takes no
// records from Write either.
func TestWriteAfterAFailureIsRefused(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := openRead(t, dir, Options{})
	require.NoError(t, w.Write(entry(1)))
	w.syncFile = func(*os.File) error { return errors.New("injected fsync failure") }
	require.ErrorContains(t, w.Save(entry(2)), "injected fsync failure")
	require.ErrorContains(t, w.Write(entry(3)), "an earlier write failed")
	require.NoError(t, w.Close())
}
