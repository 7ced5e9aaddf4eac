package golden_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/internal/golden"
)

// fakeT is a testing.TB that keeps what Equal says instead of failing the
// test that runs it; what it does not override (Name) is the real test's.
type fakeT struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	out    strings.Builder
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
	fmt.Fprintf(&f.out, format+"\n", args...)
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

func (f *fakeT) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(&f.out, format+"\n", args...)
}

// equal runs golden.Equal against a fakeT, in a goroutine of its own so
// that Fatalf can end it, and returns whether it failed and what it said.
func equal(t *testing.T, path, got string) (failed bool, out string) {
	f := &fakeT{TB: t}
	var wg sync.WaitGroup
	wg.Go(func() { golden.Equal(f, path, got) })
	wg.Wait()
	return f.failed, f.out.String()
}

// Without the switch Equal compares, shows the difference, names the
// switch, and leaves the file as it was.
func TestEqualComparesWithTheFile(t *testing.T) {
	t.Setenv(golden.UpdateEnv, "")
	path := filepath.Join(t.TempDir(), "out.golden")
	require.NoError(t, os.WriteFile(path, []byte("a\nb\n"), 0o644))
	failed, out := equal(t, path, "a\nb\n")
	assert.False(t, failed, out)

	failed, out = equal(t, path, "a\nc\n")
	assert.True(t, failed)
	assert.Contains(t, out, "-b\n")
	assert.Contains(t, out, "+c\n")
	assert.Contains(t, out, "differs from "+path+" (CHAOS_UPDATE_GOLDEN=1 go test rewrites it)")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "a\nb\n", string(b), "not rewritten without the switch")
}

// A missing golden file fails, saying how to create it.
func TestEqualFailsWithoutTheFile(t *testing.T) {
	t.Setenv(golden.UpdateEnv, "")
	path := filepath.Join(t.TempDir(), "missing.golden")
	failed, out := equal(t, path, "x")
	assert.True(t, failed)
	assert.Contains(t, out, "no such file or directory (CHAOS_UPDATE_GOLDEN=1 go test creates it)")
	assert.NoFileExists(t, path)
}

// With the switch Equal writes the file, and its directory, and passes.
func TestEqualRewritesUnderTheSwitch(t *testing.T) {
	t.Setenv(golden.UpdateEnv, "1")
	path := filepath.Join(t.TempDir(), "testdata", "new.golden")
	failed, out := equal(t, path, "fresh\n")
	assert.False(t, failed, out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "fresh\n", string(b))
}

// A value of the switch other than 1 is a mistake: nothing is written.
func TestEqualRefusesAnotherValueOfTheSwitch(t *testing.T) {
	t.Setenv(golden.UpdateEnv, "true")
	path := filepath.Join(t.TempDir(), "out.golden")
	failed, out := equal(t, path, "x")
	assert.True(t, failed)
	assert.Equal(t, `CHAOS_UPDATE_GOLDEN="true": set it to 1 to rewrite the golden files, or leave it unset`+"\n", out)
	assert.NoFileExists(t, path)
}
