package node

import (
	"bytes"
	"io/fs"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeFile is a control file the test rewrites: read returns its content.
type fakeFile struct{ content []byte }

func (f *fakeFile) read(string) ([]byte, error) {
	if f.content == nil {
		return nil, fs.ErrNotExist
	}
	return f.content, nil
}

func newClockFileTest() (*fakeNow, *skewClock, *ticker, *fakeFile, *clockFile, *bytes.Buffer) {
	now, c, tk := newFakeTicker()
	file := &fakeFile{}
	var logs bytes.Buffer
	cf := newClockFile("/n1/faketimerc", file.read, c, slog.New(slog.NewTextHandler(&logs, nil)))
	return now, c, tk, file, cf, &logs
}

// The node's clock follows the control file: an offset at once, a rate
// from the poll that saw it, the true clock back on "+0 x1".
func TestClockFileSpecs(t *testing.T) {
	now, c, tk, file, cf, _ := newClockFileTest()
	cf.poll() // no file: the true clock
	now.advance(time.Second)
	require.Equal(t, 10, tk.due())

	file.content = []byte("+0.5 x1\n") // a bump: 5 ticks owed at once
	cf.poll()
	require.Equal(t, 5, tk.due())
	rate, off := c.state()
	assert.Equal(t, 1.0, rate)
	assert.Equal(t, 500*time.Millisecond, off)

	now.advance(time.Second)
	cf.poll() // unchanged: nothing re-anchored
	require.Equal(t, 10, tk.due())

	file.content = []byte("# chaos\n+0.5 x0.5\n") // half speed from now
	cf.poll()
	now.advance(time.Second)
	require.Equal(t, 5, tk.due(), "a rate anchored at the change, not at the node's start")

	file.content = []byte("-0.5s x0.5") // a jump back of a second: no ticks until caught up
	cf.poll()
	now.advance(time.Second)
	require.Equal(t, 0, tk.due())
	now.advance(time.Second)
	require.Equal(t, 0, tk.due())
	now.advance(200 * time.Millisecond)
	require.Equal(t, 1, tk.due())

	file.content = []byte("+0 x1\n")
	cf.poll()
	rate, off = c.state()
	assert.Equal(t, 1.0, rate)
	assert.Zero(t, off)
}

// A spec the node cannot read is ignored, logged once; a file that goes
// away changes nothing.
func TestClockFileBadSpecAndMissingFile(t *testing.T) {
	now, c, tk, file, cf, logs := newClockFileTest()
	file.content = []byte("+1 x1\n")
	cf.poll()
	require.Equal(t, 10, tk.due())
	file.content = []byte("@2020-01-01 00:00:00\n")
	cf.poll()
	cf.poll()
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("spec ignored")), logs.String())
	file.content = nil
	cf.poll()
	_, off := c.state()
	assert.Equal(t, time.Second, off, "the last good spec holds")
	now.advance(100 * time.Millisecond)
	assert.Equal(t, 1, tk.due())
}

// A file that holds an offset when the node starts applies at its first
// poll.
func TestClockFileAtStart(t *testing.T) {
	_, c, _, file, cf, _ := newClockFileTest()
	file.content = []byte("# started 1700000000.5\n-2 x0.1\n")
	cf.poll()
	rate, off := c.state()
	assert.Equal(t, 0.1, rate)
	assert.Equal(t, -2*time.Second, off)
}
