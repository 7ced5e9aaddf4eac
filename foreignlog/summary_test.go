package foreignlog

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/internal/golden"
)

// Summary's text for each seed log is pinned: a change to its wording or
// figures shows as a diff of testdata/summaries.
func TestSummaryOfTheSeedLogs(t *testing.T) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "seeds", "0*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, seeds)
	for _, path := range seeds {
		l, err := ReadFile(path, "")
		require.NoError(t, err, path)
		var b strings.Builder
		Summary(&b, NewReport(l))
		golden.Equal(t, filepath.Join("testdata", "summaries", filepath.Base(path)), b.String())
	}
}
