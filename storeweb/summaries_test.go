package storeweb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The store remembers the runs of its latest listing only: a run
// directory that is gone is forgotten.
func TestSummaryCacheForgetsRunsThatAreGone(t *testing.T) {
	dir := t.TempDir()
	for _, run := range []string{"a/20260101T000000.000Z", "a/20260102T000000.000Z", "b/20260101T000000.000Z"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, run), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, run, resultsFile), []byte(`{"valid": true}`), 0o644))
	}
	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	cached := func() []string {
		var rels []string
		for rel := range s.summaries.byDir {
			rels = append(rels, rel)
		}
		return rels
	}
	_, err = s.Runs()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a/20260101T000000.000Z", "a/20260102T000000.000Z", "b/20260101T000000.000Z"}, cached())

	require.NoError(t, os.RemoveAll(filepath.Join(dir, "a/20260102T000000.000Z")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "b")))
	runs, err := s.Runs()
	require.NoError(t, err)
	assert.Len(t, runs, 1)
	assert.Equal(t, []string{"a/20260101T000000.000Z"}, cached())
}
