package wal

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchRecordBytes is the data size of benchmark records, about a small raft
// entry carrying one KV write.
const benchRecordBytes = 128

// reportCommit reports records/s over the timed part and fsyncs per record.
func reportCommit(b *testing.B, w *WAL, before Stats) {
	st := w.Stats()
	records := float64(st.Records - before.Records)
	b.ReportMetric(records/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(st.Syncs-before.Syncs)/records, "fsyncs/record")
}

func openBench(b *testing.B) *WAL {
	w, err := Open(b.TempDir(), Options{})
	require.NoError(b, err)
	b.Cleanup(func() { w.Close() })
	_, _, err = w.ReadAll()
	require.NoError(b, err)
	return w
}

// BenchmarkSaveSequential is one writer saving one record per call with a
// real fsync each: the latency floor of the disk.
func BenchmarkSaveSequential(b *testing.B) {
	w := openBench(b)
	data := make([]byte, benchRecordBytes)
	before := w.Stats()
	var index uint64
	for b.Loop() {
		index++
		if err := w.Save(Record{Type: 1, Index: index, Data: data}); err != nil {
			b.Fatal(err)
		}
	}
	reportCommit(b, w, before)
}

// BenchmarkGroupCommit has N goroutines each saving one record per call,
// b.N records in all, with real fsyncs. fsyncs/record below 1 is group
// commit at work; records/s should grow with the writers.
func BenchmarkGroupCommit(b *testing.B) {
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			w := openBench(b)
			data := make([]byte, benchRecordBytes)
			before := w.Stats()
			b.ResetTimer()
			var wg sync.WaitGroup
			for g := range writers {
				n := b.N / writers
				if g < b.N%writers {
					n++
				}
				wg.Go(func() {
					for i := range n {
						if err := w.Save(Record{Type: 1, Index: uint64(i + 1), Data: data}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			reportCommit(b, w, before)
		})
	}
}
