package workload

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"chaos/history"
)

// nopClient answers every operation ok at once.
type nopClient struct{}

func (nopClient) Do(context.Context, Op) history.Outcome {
	return history.Outcome{Type: history.OK, Node: "n1"}
}

func (nopClient) Close() error { return nil }

// BenchmarkRunnerOverhead measures what the runner and the recorder cost
// per operation: 50 workers with clients that answer at once, the register
// workload, the history streamed to a file. The load must never wait on
// recording, so this must stay well above 100,000 ops/s.
func BenchmarkRunnerOverhead(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "history.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	rec := history.NewRecorder(f, func() time.Duration { return time.Since(start) }, history.RecorderOptions{})
	gen, err := NewRegister(10)
	if err != nil {
		b.Fatal(err)
	}
	clients := make([]Client, 50)
	for i := range clients {
		clients[i] = nopClient{}
	}
	r, err := NewRunner(Config{Clients: clients, Generator: gen, Recorder: rec,
		RequestTimeout: time.Minute, MaxOps: int64(b.N), Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	stats, err := r.Run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if stats.OK != int64(b.N) {
		b.Fatalf("%d ops completed, want %d", stats.OK, b.N)
	}
	b.ReportMetric(stats.OpsPerSecond(), "ops/s")
}
