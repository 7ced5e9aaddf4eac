package raftcheck

import (
	"bytes"
	"fmt"
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
