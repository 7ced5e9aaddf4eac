package termsafe

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain key k3, café, 日本, ✓":     "plain key k3, café, 日本, ✓",
		"lines\nand\ttabs stay":         "lines\nand\ttabs stay",
		"k\x1b[31mred\x1b[0m":           `k\x1b[31mred\x1b[0m`,
		"title\x1b]0;owned\x07":         `title\x1b]0;owned\x07`,
		"progress 10%\rverdict: valid":  `progress 10%\x0dverdict: valid`,
		"back\bspace, nul\x00, del\x7f": `back\x08space, nul\x00, del\x7f`,
		"c1 csi \u009b31m, nel \u0085":  `c1 csi \u009b31m, nel \u0085`,
		"bad utf-8 \xff\xfe, lone \x9b": `bad utf-8 \xff\xfe, lone \x9b`,
		"bidi \u202eevil\u202c \u2066x": `bidi \u202eevil\u202c \u2066x`,
		"":                              "",
	} {
		assert.Equal(t, want, Escape(in), "%q", in)
	}
}

// The writer escapes what passes through it and says it wrote it all.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	assert.Equal(t, w, NewWriter(w), "not wrapped twice")
	n, err := fmt.Fprintf(w, "key %s: %v\n", "k\x1b[2J", errors.New("node said \x1b[31mno"))
	require.NoError(t, err)
	assert.Equal(t, len("key k\x1b[2J: node said \x1b[31mno\n"), n)
	assert.Equal(t, "key k\\x1b[2J: node said \\x1b[31mno\n", b.String())
	assert.NotContains(t, b.String(), "\x1b")

	_, err = NewWriter(failing{}).Write([]byte("\x1b"))
	require.EqualError(t, err, "disk full")
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }
