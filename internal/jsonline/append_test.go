package jsonline

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendStringDecodesBack(t *testing.T) {
	for _, s := range []string{"", "n1", "k-12", "a\"b", `back\slash`, "tab\t", "<&>", "\u00e9\u2028", "\x00", "\xff"} {
		b := AppendString([]byte("x"), s)
		var got string
		require.NoError(t, json.Unmarshal(b[1:], &got), "%q", b)
		want := s
		if s == "\xff" {
			want = "\ufffd" // invalid UTF-8 is replaced, as encoding/json does
		}
		require.Equal(t, want, got)
	}
	require.Equal(t, `"plain"`, string(AppendString(nil, "plain")), "plain ASCII is copied as is")
}
