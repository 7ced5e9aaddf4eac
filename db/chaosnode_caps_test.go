package db

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/eventlog"
)

// A node's state comes from its GET /status; a node that does not answer
// is left out.
func TestChaosNodeStatesAskStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"n1","role":"leader","term":7,"leader":"n1","commit":40,"applied":39,"last_index":42}`))
	}))
	defer srv.Close()
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	d := &ChaosNode{ClientPort: p}
	// n2's address has nothing listening on that port.
	st, err := d.States(context.Background(), []Node{{Name: "n1", Addr: host}, {Name: "n2", Addr: "127.0.0.2"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]NodeState{"n1": {Role: RoleLeader, Term: 7, Leader: "n1", Commit: 40, Applied: 39, LastIndex: 42}}, st)
}

// The targeted faults read a chaos-node's newest events from its log
// directory on its host; a line being written is left out.
func TestChaosNodeEventLogTail(t *testing.T) {
	dir := t.TempDir()
	d := &ChaosNode{Layout: Layout{DataDir: dir}}
	n := Node{Name: "n2", Addr: "127.0.0.12"}
	path := d.EventLog(n)
	assert.Equal(t, filepath.Join(dir, "chaos-node", "n2", eventlog.FileName), path)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	lines := `{"time":"2026-11-24T15:16:27.7Z","event":"vote","node":"n2","term":5,"for":"n4"}` + "\n" +
		`{"time":"2026-11-24T15:16:27.8Z","event":"role","node":"n2","role":"follower","term":5,"leader":"n4"}` + "\n" +
		`{"time":"2026-11-24T15:16:27.9Z","event":"comm`
	require.NoError(t, os.WriteFile(path, []byte(lines), 0o644))
	evs, err := TailEvents(context.Background(), control.NewLocal("n2"), path)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, eventlog.KindVote, evs[0].Event)
	assert.Equal(t, "n4", evs[0].For)
	assert.Equal(t, uint64(5), evs[1].Term)
	_, err = TailEvents(context.Background(), control.NewLocal("n2"), filepath.Join(dir, "missing"))
	assert.ErrorContains(t, err, "read events: ")
}

// chaos-node declares every capability, hooks only when started with
// them, and the timing it is started with; etcd has a leader and states
// and its default timing; a system that declares nothing has the
// defaults.
func TestCapabilitiesOfTheBuiltInSystems(t *testing.T) {
	nodes := []Node{{Name: "n1", Addr: "10.0.0.11"}, {Name: "n2", Addr: "10.0.0.12"}}
	cn := CapabilitiesOf(&ChaosNode{Nodes: nodes, FaultHooks: true})
	assert.NotNil(t, cn.Leader)
	assert.NotNil(t, cn.States)
	assert.NotNil(t, cn.Events)
	require.NotNil(t, cn.Hooks)
	assert.Equal(t, map[string]string{"n1": "10.0.0.11:7000", "n2": "10.0.0.12:7000"}, cn.Hooks.(*ChaosNodeHooks).Addrs)
	assert.True(t, cn.Hooks.Hooked("n2"))
	assert.False(t, cn.Hooks.Hooked("n3"))
	assert.Equal(t, Timing{Heartbeat: 50 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond, Recovery: 5 * time.Second}, cn.Timing)
	assert.Nil(t, CapabilitiesOf(&ChaosNode{Nodes: nodes}).Hooks, "no hooks unless started with them")
	slow := CapabilitiesOf(&ChaosNode{Heartbeat: time.Second, Election: 9 * time.Second})
	assert.Equal(t, 9*time.Second, slow.Timing.ElectionTimeout)

	e := CapabilitiesOf(&Etcd{})
	assert.NotNil(t, e.Leader)
	assert.NotNil(t, e.States)
	assert.Nil(t, e.Events)
	assert.Nil(t, e.Hooks)
	assert.Equal(t, Timing{Heartbeat: 100 * time.Millisecond, ElectionTimeout: time.Second, Recovery: 5 * time.Second}, e.Timing)

	none := CapabilitiesOf(fakeBare{})
	assert.Equal(t, Capabilities{Timing: DefaultTiming()}, none)
	assert.Zero(t, none.Timing.Recovery, "a system that states no recovery bound has none")
}

// fakeBare is a system that declares no capabilities.
type fakeBare struct{ DB }

// The argv carries the timing the capabilities report.
func TestChaosNodeStartsWithItsTiming(t *testing.T) {
	d := &ChaosNode{Binary: "/bin/chaos", Nodes: []Node{{Name: "n1", Addr: "10.0.0.11"}}, Heartbeat: 70 * time.Millisecond}
	argv, err := d.argv(d.Nodes[0])
	require.NoError(t, err)
	line := strings.Join(argv, " ")
	assert.Contains(t, line, "--heartbeat-interval 70ms --election-timeout 500ms")
	assert.Equal(t, 70*time.Millisecond, d.Capabilities().Timing.Heartbeat)
}
