package campaign

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every test runs in exactly one of N shards, for every N.
func TestShardsCoverEveryTestOnce(t *testing.T) {
	var tests []Test
	for i := range 11 {
		tests = append(tests, Test{Name: fmt.Sprintf("t%d", i)})
	}
	for total := 1; total <= 13; total++ {
		runs := map[string]int{}
		for index := 1; index <= total; index++ {
			s, err := ParseShard(fmt.Sprintf("%d/%d", index, total))
			require.NoError(t, err)
			sel, err := s.Select(tests, "")
			require.NoError(t, err)
			for _, t := range sel {
				runs[t.Name]++
			}
		}
		for _, tt := range tests {
			assert.Equal(t, 1, runs[tt.Name], "%s with %d shards", tt.Name, total)
		}
	}
}

func TestShardOnly(t *testing.T) {
	tests := []Test{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	s, _ := ParseShard("")
	sel, err := s.Select(tests, "b")
	require.NoError(t, err)
	assert.Equal(t, []Test{{Name: "b"}}, sel)
	s, _ = ParseShard("1/2")
	sel, err = s.Select(tests, "b")
	require.NoError(t, err)
	assert.Empty(t, sel, "b is in shard 2/2")
	_, err = s.Select(tests, "d")
	assert.EqualError(t, err, `--only "d": no such test; the campaign has a, b, c`)
}

func TestParseBadShard(t *testing.T) {
	for _, s := range []string{"0/2", "3/2", "1", "a/b", "1/0", "-1/2", "1/2/3"} {
		_, err := ParseShard(s)
		assert.EqualError(t, err, fmt.Sprintf("--shard %q: want I/N with 1 <= I <= N, such as 2/4", s))
	}
}
