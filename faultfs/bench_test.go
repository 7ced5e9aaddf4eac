package faultfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"chaos/testbed/bedtest"
)

// walFile is a log file written one record at a time, each made durable
// before the next.
type walFile interface {
	// append writes one record and syncs it.
	append(b *testing.B)
	close()
}

// appendFile is a file opened O_APPEND whose records are fsynced: it
// grows with every record.
type appendFile struct{ f *os.File }

func openAppend(b *testing.B, dir string) walFile {
	f, err := os.OpenFile(filepath.Join(dir, "append.wal"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	return &appendFile{f: f}
}

func (a *appendFile) append(b *testing.B) {
	if _, err := a.f.Write(bytes.Repeat([]byte{'r'}, 4096)); err != nil {
		b.Fatal(err)
	}
	if err := a.f.Sync(); err != nil {
		b.Fatal(err)
	}
}

func (a *appendFile) close() { a.f.Close() }

// segmentFile is chaos-node's WAL segment: a header written, the file
// preallocated with fallocate(2) and fdatasynced, then records written
// one after the other into the preallocated space, each fdatasynced.
type segmentFile struct {
	f   *os.File
	off int64
}

func openSegment(b *testing.B, dir string) walFile {
	f, err := os.OpenFile(filepath.Join(dir, "segment.wal"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	head := []byte("header")
	if _, err := f.Write(head); err != nil {
		b.Fatal(err)
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, 64<<20); err != nil {
		b.Fatal(err)
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		b.Fatal(err)
	}
	return &segmentFile{f: f, off: int64(len(head))}
}

func (s *segmentFile) append(b *testing.B) {
	record := bytes.Repeat([]byte{'r'}, 300)
	if s.off+int64(len(record)) > 64<<20 {
		s.off = 6 // overwrites records: a benchmark longer than a segment
	}
	if _, err := s.f.WriteAt(record, s.off); err != nil {
		b.Fatal(err)
	}
	s.off += int64(len(record))
	if err := unix.Fdatasync(int(s.f.Fd())); err != nil {
		b.Fatal(err)
	}
}

func (s *segmentFile) close() { s.f.Close() }

// benchmarkWAL is the cost of the FUSE layer for a log written as open's
// file is: one record per op, directly (in a directory beside the
// backing one) and through the mount, in turns of 64 records so that
// both see the same disk. It reports both ns/op and their ratio
// (mount/direct).
func benchmarkWAL(b *testing.B, open func(*testing.B, string) walFile) {
	bedtest.RequireFUSE(b)
	backing, mnt := filepath.Join(b.TempDir(), "backing"), filepath.Join(b.TempDir(), "mnt")
	direct := filepath.Join(b.TempDir(), "direct")
	for _, d := range []string{backing, mnt, direct} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	fsys, err := Mount(backing, mnt, nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Unmount()
	d, m := open(b, direct), open(b, mnt)
	defer d.close()
	defer m.close()
	turn := func(f walFile, n int) time.Duration {
		start := time.Now()
		for range n {
			f.append(b)
		}
		return time.Since(start)
	}
	var td, tm time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(64, b.N-done)
		td += turn(d, n)
		tm += turn(m, n)
		done += n
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(td.Nanoseconds())/float64(b.N), "direct-ns/op")
	b.ReportMetric(float64(tm.Nanoseconds())/float64(b.N), "faultfs-ns/op")
	b.ReportMetric(float64(tm)/float64(td), "ratio")
}

// BenchmarkAppendFsync: one 4 KiB record appended (O_APPEND) and fsynced
// per op; the file grows with each.
func BenchmarkAppendFsync(b *testing.B) { benchmarkWAL(b, openAppend) }

// BenchmarkSegmentFdatasync: chaos-node's WAL, one 300-byte record
// written into a preallocated segment and fdatasynced per op.
func BenchmarkSegmentFdatasync(b *testing.B) { benchmarkWAL(b, openSegment) }
