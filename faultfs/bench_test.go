package faultfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"chaos/testbed/bedtest"
)

// appendFsync appends a 4 KiB record to f and fsyncs it, n times.
func appendFsync(b *testing.B, f *os.File, n int) time.Duration {
	record := bytes.Repeat([]byte{'r'}, 4096)
	start := time.Now()
	for range n {
		if _, err := f.Write(record); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkAppendFsync is the cost of the FUSE layer for a write-ahead
// log's way of writing: one 4 KiB record appended and fsynced per op,
// directly in the backing directory and through the mount, in turns of
// 64 records so that both see the same disk. It reports both ns/op and
// their ratio (mount/direct).
func BenchmarkAppendFsync(b *testing.B) {
	bedtest.RequireFUSE(b)
	backing, mnt := filepath.Join(b.TempDir(), "backing"), filepath.Join(b.TempDir(), "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	fsys, err := Mount(backing, mnt, nil, NamesPOSIX)
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Unmount()
	open := func(p string) *os.File {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	direct, mounted := open(filepath.Join(backing, "direct.wal")), open(filepath.Join(mnt, "mounted.wal"))
	defer direct.Close()
	defer mounted.Close()
	var td, tm time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(64, b.N-done)
		td += appendFsync(b, direct, n)
		tm += appendFsync(b, mounted, n)
		done += n
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(td.Nanoseconds())/float64(b.N), "direct-ns/op")
	b.ReportMetric(float64(tm.Nanoseconds())/float64(b.N), "faultfs-ns/op")
	b.ReportMetric(float64(tm)/float64(td), "ratio")
}
