package inputfile

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sparseFile makes a file of size bytes that takes no disk: zeros, no
// newline, what a hostile or broken input can look like.
func sparseFile(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sparse")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Truncate(p, size))
	return p
}

// What is not a regular file is refused at once, named with its kind:
// /dev/zero (endless), a link to it, a FIFO (whose open would block
// waiting for a writer) and a directory.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.Symlink("/dev/zero", link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cases := map[string]string{
		"/dev/zero": "read /dev/zero: it is a character device, not a regular file: give a file",
		link:        "read " + link + ": it is a character device, not a regular file: give a file",
		fifo:        "read " + fifo + ": it is a named pipe, not a regular file: give a file",
		dir:         "read " + dir + ": it is a directory, not a regular file: give a file",
	}
	for path, want := range cases {
		start := time.Now()
		_, err := Open(path)
		require.EqualError(t, err, want)
		require.ErrorIs(t, err, ErrNotRegular)
		_, err = ReadFile(path, 1<<20)
		require.ErrorIs(t, err, ErrNotRegular)
		assert.Less(t, time.Since(start), time.Second, path)
	}
	_, err := Open(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A file over the bound is refused before it is read: a 2 GiB sparse file
// costs neither time nor memory.
func TestReadFileRefusesAFileOverTheBound(t *testing.T) {
	p := sparseFile(t, 2<<30)
	var before, after runtimeMem
	before.read()
	start := time.Now()
	_, err := ReadFile(p, 64<<20)
	require.EqualError(t, err, "read "+p+": it is 2 GiB, too large: this file may hold at most 64 MiB")
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Less(t, time.Since(start), time.Second)
	after.read()
	assert.Less(t, after.total-before.total, uint64(1<<20), "nothing of the file was read into memory")

	small := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(small, []byte("12345"), 0o644))
	b, err := ReadFile(small, 5)
	require.NoError(t, err)
	assert.Equal(t, "12345", string(b))
	_, err = ReadFile(small, 4)
	require.EqualError(t, err, "read "+small+": it is 5 B, too large: this file may hold at most 4 B")
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB", 2 << 30: "2 GiB", 5 << 40: "5 TiB"} {
		assert.Equal(t, want, Size(n), "%d", n)
	}
}

// runtimeMem is the bytes allocated on the heap so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}
