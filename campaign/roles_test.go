package campaign

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/control"
	"chaos/db"
	"chaos/node/eventlog"
)

// The targeted faults read a chaos-node's newest events from its log
// directory on its host; a line being written is left out.
func TestNodeEventsReadsTheLogTail(t *testing.T) {
	dir := t.TempDir()
	d := &db.ChaosNode{Layout: db.Layout{DataDir: dir}}
	n := db.Node{Name: "n2", Addr: "127.0.0.12"}
	logDir := d.Layout.NodeDir(d.Name(), n)
	require.NoError(t, os.MkdirAll(logDir, 0o755))
	lines := `{"time":"2026-11-24T15:16:27.7Z","event":"vote","node":"n2","term":5,"for":"n4"}` + "\n" +
		`{"time":"2026-11-24T15:16:27.8Z","event":"role","node":"n2","role":"follower","term":5,"leader":"n4"}` + "\n" +
		`{"time":"2026-11-24T15:16:27.9Z","event":"comm`
	require.NoError(t, os.WriteFile(filepath.Join(logDir, eventlog.FileName), []byte(lines), 0o644))
	c := &cluster.Cluster{DB: d, Nodes: []db.Node{n}, Remotes: map[string]control.Remote{"n2": control.NewLocal("n2")}}
	events := nodeEvents(c)
	require.NotNil(t, events)
	evs, err := events(context.Background(), "n2")
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, eventlog.KindVote, evs[0].Event)
	assert.Equal(t, "n4", evs[0].For)
	assert.Equal(t, uint64(5), evs[1].Term)
	_, err = events(context.Background(), "n9")
	assert.EqualError(t, err, "n9: no remote for the node's host")
}

// A node's state comes from its GET /status; a node that does not answer
// is left out.
func TestNodeStatesAsksStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"n1","role":"leader","term":7,"leader":"n1","commit":40,"applied":40,"last_index":42}`))
	}))
	defer srv.Close()
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	d := &db.ChaosNode{ClientPort: p}
	// n2's address has nothing listening on that port.
	c := &cluster.Cluster{DB: d, Nodes: []db.Node{{Name: "n1", Addr: host}, {Name: "n2", Addr: "127.0.0.2"}}}
	states := nodeStates(c)
	require.NotNil(t, states)
	st, err := states(context.Background())
	require.NoError(t, err)
	require.Len(t, st, 1)
	assert.Equal(t, "leader", st["n1"].Role)
	assert.Equal(t, uint64(7), st["n1"].Term)
	assert.Equal(t, uint64(42), st["n1"].LastIndex)
}

// Other systems report neither states nor events.
func TestRolesNeedChaosNode(t *testing.T) {
	c := &cluster.Cluster{DB: &db.Etcd{}}
	assert.Nil(t, nodeStates(c))
	assert.Nil(t, nodeEvents(c))
}
