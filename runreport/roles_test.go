package runreport

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/eventlog"
)

// A node with more role changes than the timeline draws has an even
// sample of them drawn, from its first to near its last; a node with
// fewer has all of them.
func TestNodeTimelineDrawsABoundedSample(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for node, terms := range map[string]int{"n1": 3 * maxRoles, "n2": 10} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "nodes", node), 0o755))
		f, err := os.Create(filepath.Join(dir, "nodes", node, eventlog.FileName))
		require.NoError(t, err)
		for term := 1; term <= terms; term++ {
			at := t0.Add(time.Duration(term) * time.Second).Format(time.RFC3339Nano)
			fmt.Fprintf(f, `{"time":%q,"node":%q,"event":"role","role":"candidate","term":%d}`+"\n", at, node, term)
			fmt.Fprintf(f, `{"time":%q,"node":%q,"event":"apply","index":%d,"term":%d,"hash":"00"}`+"\n", at, node, term, term)
		}
		require.NoError(t, f.Close())
	}
	roles, err := loadRoles(dir)
	require.NoError(t, err)
	terms := map[string][]int{}
	for _, e := range roles {
		terms[e.Node] = append(terms[e.Node], e.Term)
	}
	assert.Len(t, terms["n2"], 10)
	n1 := terms["n1"]
	assert.LessOrEqual(t, len(n1), maxRoles)
	assert.GreaterOrEqual(t, len(n1), maxRoles/2)
	assert.Equal(t, 1, n1[0])
	// The last one drawn is within a stride of the last, at most
	// 2 * 6000 / 2000 events.
	assert.Greater(t, n1[len(n1)-1], 3*maxRoles-6)
}
