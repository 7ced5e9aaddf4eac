package history

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A long first line that does not begin as a JSON object (a file of zeros:
// /dev/zero, a sparse file) is refused after the first buffer of it, not
// after reading MaxLineBytes.
func TestScanRefusesALongLineThatIsNoObject(t *testing.T) {
	p := filepath.Join(t.TempDir(), "history.jsonl")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Truncate(p, 2<<30))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	start := time.Now()
	_, err = Scan(f, func(*Op) error { return nil })
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 1, pe.Line)
	require.EqualError(t, err, `line 1: a line of over 1048576 bytes that is not a JSON object: it begins with "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"`)
	assert.Less(t, time.Since(start), time.Second)
	off, err := f.Seek(0, 1)
	require.NoError(t, err)
	assert.LessOrEqual(t, off, int64(2<<20), "read no further than the first buffer")
}

// A long line that begins as an object is read up to MaxLineBytes (a set
// workload's final read can be megabytes long).
func TestScanReadsALongObjectLine(t *testing.T) {
	elems := strings.Repeat("1,", 1<<20)
	line := `{"index":0,"time":1,"process":0,"type":"invoke","f":"read","value":[` + elems + `1]}` + "\n"
	ops := 0
	_, err := Scan(bytes.NewReader([]byte(line)), func(*Op) error { ops++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 1, ops)
}
