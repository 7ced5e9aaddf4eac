package history

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRecorder measures how many operations (an invoke and its
// completion) the recorder takes per second from many concurrent workers
// while streaming to a file. The load generator must never wait on it: the
// target is well above 100,000 ops/s.
func BenchmarkRecorder(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "history.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	r := NewRecorder(f, func() time.Duration { return time.Since(start) }, RecorderOptions{})
	var processes atomic.Int64
	b.SetParallelism(25) // 50 workers on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		process := int(processes.Add(1))
		value := process << 32
		for pb.Next() {
			value++
			p, err := r.Invoke(process, "write", "k7", value)
			if err != nil {
				b.Error(err)
				return
			}
			if err := r.Complete(p, Outcome{Type: OK, Value: value, Node: "n3"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "ops/s")
}
