package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConcurrency(t *testing.T) {
	for _, tc := range []struct {
		in    string
		nodes int
		want  int
		err   string // a substring of the error; "" for success
	}{
		{in: "10", nodes: 5, want: 10},
		{in: "1", nodes: 0, want: 1}, // a plain number needs no nodes
		{in: "2n", nodes: 5, want: 10},
		{in: "1n", nodes: 3, want: 3},
		{in: " 3n ", nodes: 2, want: 6},
		{in: "10000", nodes: 1, want: MaxConcurrency},
		{in: "2000n", nodes: 5, want: MaxConcurrency},
		{in: "0", nodes: 5, err: "at least 1"},
		{in: "0n", nodes: 5, err: "at least 1"},
		{in: "-3", nodes: 5, err: "at least 1"},
		{in: "-1n", nodes: 5, err: "at least 1"},
		{in: "", nodes: 5, err: "such as 2n"},
		{in: "n", nodes: 5, err: "such as 2n"},
		{in: "abc", nodes: 5, err: "such as 2n"},
		{in: "2x", nodes: 5, err: "such as 2n"},
		{in: "2nn", nodes: 5, err: "such as 2n"},
		{in: "1.5n", nodes: 5, err: "such as 2n"},
		{in: "10001", nodes: 5, err: "limit of 10000"},
		{in: "2001n", nodes: 5, err: "limit of 10000"},
		{in: "9999999999999999999", nodes: 5, err: "such as 2n"}, // out of int range
		{in: "10000n", nodes: 1 << 62, err: "limit of 10000"},
		{in: "2n", nodes: 0, err: "0 nodes"},
	} {
		got, err := ParseConcurrency(tc.in, tc.nodes)
		if tc.err != "" {
			require.Error(t, err, "ParseConcurrency(%q, %d)", tc.in, tc.nodes)
			assert.Contains(t, err.Error(), "--concurrency", "the error names the flag")
			assert.Contains(t, err.Error(), tc.err, "ParseConcurrency(%q, %d)", tc.in, tc.nodes)
			continue
		}
		require.NoError(t, err, "ParseConcurrency(%q, %d)", tc.in, tc.nodes)
		assert.Equal(t, tc.want, got, "ParseConcurrency(%q, %d)", tc.in, tc.nodes)
	}
}
