package raftcheck

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"chaos/eventlog"
)

// benchEventLog writes a five-node event log of terms elections, each
// followed by perTerm entries that every node commits and applies: what a
// long run's nodes/*/events.jsonl hold, merged.
func benchEventLog(terms, perTerm int) []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) string { return t0.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano) }
	i, index := 0, uint64(0)
	for term := 1; term <= terms; term++ {
		leader := fmt.Sprintf("n%d", term%5+1)
		for n := 1; n <= 5; n++ {
			node := fmt.Sprintf("n%d", n)
			role := "follower"
			if node == leader {
				role = "leader"
			}
			fmt.Fprintf(&b, `{"time":%q,"node":%q,"event":"vote","term":%d,"for":%q}`+"\n", at(i), node, term, leader)
			fmt.Fprintf(&b, `{"time":%q,"node":%q,"event":"role","role":%q,"term":%d,"leader":%q}`+"\n", at(i), node, role, term, leader)
			i++
		}
		for range perTerm {
			index++
			for n := 1; n <= 5; n++ {
				node := fmt.Sprintf("n%d", n)
				fmt.Fprintf(&b, `{"time":%q,"node":%q,"event":"commit","index":%d}`+"\n", at(i), node, index)
				fmt.Fprintf(&b, `{"time":%q,"node":%q,"event":"apply","index":%d,"term":%d,"hash":"%016x"}`+"\n", at(i), node, index, term, index*7919)
				i++
			}
		}
	}
	return b.Bytes()
}

// BenchmarkReadEvents measures parsing events.jsonl lines.
func BenchmarkReadEvents(b *testing.B) {
	data := benchEventLog(100, 1000)
	lines := bytes.Count(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := eventlog.ReadEvents(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRaft measures the invariant checker over parsed events.
func BenchmarkRaft(b *testing.B) {
	evs, _, err := eventlog.ReadEvents(bytes.NewReader(benchEventLog(100, 1000)))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if r := Raft(evs); len(r.Details.(*RaftDetails).Violations) != 0 {
			b.Fatal("violations in a clean log")
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReadLongRun reads the event logs of five nodes that each
// commit and apply 200,000 entries (2,000,000 lines), as CheckRun does.
// Target (issue 40): the event logs of a 10-minute run at --concurrency
// 100 (7.2 million lines) read in at most 8 s on 2 cores, on the core
// that chaos check leaves free while it reads the history, in a memory
// that grows with the log indexes and not with the lines: peak-B/index,
// the heap's growth while reading per log index, at most 64 bytes (16 for
// State Machine Safety's table, the rest garbage between collections).
func BenchmarkReadLongRun(b *testing.B) {
	const entries = 200_000
	dir, _ := writeLongRun(b, entries, nil)
	lines := 5 * (3 + 2*entries)
	for b.Loop() {
		runtime.GC()
		before := heapAlloc()
		peak := before
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				peak = max(peak, heapAlloc())
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		r, err := readEvents(runFiles(dir))
		elapsed := time.Since(start)
		close(stop)
		<-sampled
		if err != nil || r.count != lines {
			b.Fatal(err, r.count)
		}
		b.ReportMetric(float64(lines)/elapsed.Seconds(), "lines/s")
		b.ReportMetric(float64(peak-before)/entries, "peak-B/index")
	}
}

func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
