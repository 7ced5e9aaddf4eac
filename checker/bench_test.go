package checker

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chaos/history"
)

// millionOps is the history of the performance target: 1,000,000 register
// operations over 1,000 keys from 50 clients, 1% of them info.
func millionOps() simConfig {
	return simConfig{seed: 1, ops: 1_000_000, keys: 1000, clients: 50, infoRate: 0.01, failRate: 0.01,
		casRate: 0.2, nemesis: true}
}

// hotKeyOps is the history of issue 28's target: 1,000,000 register
// operations on one key from 200 clients, 10% of them info: a search has no
// hope there, the write order decides it.
func hotKeyOps() simConfig {
	return simConfig{seed: 1, ops: 1_000_000, keys: 1, clients: 200, infoRate: 0.1, failRate: 0.01,
		casRate: 0.2, nemesis: true}
}

// BenchmarkCheckLinearizable1M checks the target history end to end, as
// `chaos check` does: read history.jsonl (2,000,000 lines) op by op into
// Checks, then decide. Target (issue 16): 3 s and 512 MB on 2 cores.
// Reports the seconds reading (parse and split by key) and checking, and
// the peak heap.
func BenchmarkCheckLinearizable1M(b *testing.B) { benchmarkCheck(b, millionOps()) }

// BenchmarkCheckLinearizableHotKey1M is BenchmarkCheckLinearizable1M on
// hotKeyOps. Target (issue 28): checking in at most twice the time reading
// takes (3x in all), within 1 GB.
func BenchmarkCheckLinearizableHotKey1M(b *testing.B) { benchmarkCheck(b, hotKeyOps()) }

func benchmarkCheck(b *testing.B, cfg simConfig) {
	path := filepath.Join(b.TempDir(), "history.jsonl")
	if err := writeHistory(path, cfg); err != nil { // chaos check reads a file, never holds it
		b.Fatal(err)
	}
	runtime.GC()
	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		peak := watchHeap()
		start := time.Now()
		c := NewChecks(Options{Linearizable: LinearizableOptions{Timeout: 60 * time.Second}})
		_, err = history.Scan(f, c.Add)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		parsed := time.Now()
		r, err := c.Report(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if res := r.Checks["linearizable"]; res.Valid != Valid {
			b.Fatalf("verdict %v: %+v", res.Valid, res.Details)
		}
		b.ReportMetric(parsed.Sub(start).Seconds(), "read-s")
		b.ReportMetric(time.Since(parsed).Seconds(), "check-s")
		b.ReportMetric(time.Since(start).Seconds(), "total-s")
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MB")
	}
}

// watchHeap samples the live heap every 10 ms until the returned function
// is called, which returns the highest sample (and the final heap).
func watchHeap() func() uint64 {
	var peak atomic.Uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > peak.Load() {
			peak.Store(ms.HeapAlloc)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample()
			}
		}
	})
	return func() uint64 {
		close(stop)
		wg.Wait()
		sample()
		return peak.Load()
	}
}
