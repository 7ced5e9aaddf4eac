package described

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/internal/golden"
)

var threeNodes = []db.Node{{Name: "n1", Addr: "10.77.0.11"}, {Name: "n2", Addr: "10.77.0.12"}, {Name: "n3", Addr: "10.77.0.13"}}

func example(t *testing.T, name string) *Description {
	t.Helper()
	d, err := Load(filepath.Join("../../examples/systems", name+".yaml"))
	require.NoError(t, err)
	return d
}

// lifecycle runs every DB method once for n2 against a recording Remote.
func lifecycle(t *testing.T, d db.DB) string {
	t.Helper()
	ctx := context.Background()
	var rec remotetest.Recorder
	r := rec.Remote("n2", nil)
	n := threeNodes[1]
	require.NoError(t, d.Install(ctx, r, n))
	require.NoError(t, d.Start(ctx, r, n))
	require.NoError(t, d.Pause(ctx, r, n))
	require.NoError(t, d.Resume(ctx, r, n))
	require.NoError(t, d.Kill(ctx, r, n))
	require.NoError(t, d.Stop(ctx, r, n))
	require.NoError(t, d.Wipe(ctx, r, n))
	require.NoError(t, d.CollectLogs(ctx, r, n, t.TempDir()))
	return remotetest.Transcript(rec.Take())
}

// The commands each example runs on a host, from install to log
// collection: start rendered with every variable, signals to the process
// group, the default wipe.
func TestExampleCommands(t *testing.T) {
	cfg := db.Config{Nodes: threeNodes, Layout: db.DefaultLayout(), Binary: "/build/chaos", Upload: true}
	d, err := New(example(t, "etcd"), cfg)
	require.NoError(t, err)
	golden.Equal(t, "testdata/etcd.golden", lifecycle(t, d))
	assert.Equal(t, "10.77.0.12:2379", d.ClientAddr(threeNodes[1]))

	cfg.Bugs = []string{"stale-read"}
	d, err = New(example(t, "chaos-node"), cfg)
	require.NoError(t, err)
	golden.Equal(t, "testdata/chaos-node.golden", lifecycle(t, d))
}

func TestNewRefusesBugsWithoutBugFlags(t *testing.T) {
	_, err := New(example(t, "etcd"), db.Config{Nodes: threeNodes, Bugs: []string{"stale-read"}})
	require.ErrorContains(t, err, "--bug plants bugs through {bug_flags}, which start does not use")
}

// Only a description with a leader or a state probe has the Leader
// capability; no described system has fault hooks.
func TestCapabilities(t *testing.T) {
	withLeader, err := New(example(t, "etcd"), db.Config{Nodes: threeNodes})
	require.NoError(t, err)
	assert.IsType(t, leaderProbe{}, db.CapabilitiesOf(withLeader).Leader)
	desc := example(t, "etcd")
	desc.Leader = nil
	fromStates, err := New(desc, db.Config{Nodes: threeNodes})
	require.NoError(t, err)
	assert.IsType(t, statesLeader{}, db.CapabilitiesOf(fromStates).Leader)
	desc.State = nil
	without, err := New(desc, db.Config{Nodes: threeNodes})
	require.NoError(t, err)
	assert.Nil(t, db.CapabilitiesOf(without).Leader)
	for _, d := range []db.DB{withLeader, without} {
		assert.Nil(t, db.CapabilitiesOf(d).Hooks)
		s, ok := From(d)
		require.True(t, ok)
		assert.Equal(t, "etcd", s.Name())
	}
}

// describeLocal loads text as a description whose client port is the
// port of addr, and builds it for one node at addr's host.
func describeLocal(t *testing.T, text, addr string) (db.DB, db.Node) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	desc, err := Load(writeFile(t, "mydb.yaml", strings.ReplaceAll(text, "PORT", port)))
	require.NoError(t, err)
	n := db.Node{Name: "n1", Addr: host}
	d, err := New(desc, db.Config{Nodes: []db.Node{n}, Layout: db.Layout{DataDir: t.TempDir()}})
	require.NoError(t, err)
	return d, n
}

const checksText = `name: mydb
ports: {client: PORT}
start: mydb
up: {http: /up}
ready: {http: /health, body_contains: '"healthy":true'}
client: {command: ./client}
`

// Up is one check of up; Ready waits for ready, whatever up says.
func TestUpAndReadyOverHTTP(t *testing.T) {
	var mu sync.Mutex
	healthy := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/up":
			fmt.Fprint(w, "{}")
		case "/health":
			fmt.Fprintf(w, `{"healthy":%v}`, healthy)
		}
	}))
	defer srv.Close()
	d, n := describeLocal(t, checksText, strings.TrimPrefix(srv.URL, "http://"))
	ctx := context.Background()
	require.NoError(t, d.Up(ctx, n))
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := d.Ready(short, n)
	require.ErrorContains(t, err, `n1: wait for mydb: not ready: context deadline exceeded (last: GET /health: the answer lacks "\"healthy\":true"`)
	mu.Lock()
	healthy = true
	mu.Unlock()
	require.NoError(t, d.Ready(ctx, n))
	srv.Close()
	require.ErrorContains(t, d.Up(ctx, n), "n1: mydb up: ")
}

func TestUpOverTCPAndCommand(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx := context.Background()
	d, n := describeLocal(t, strings.Replace(checksText, "up: {http: /up}", "up: {tcp: client}", 1), l.Addr().String())
	require.NoError(t, d.Up(ctx, n))
	require.NoError(t, l.Close())
	require.ErrorContains(t, d.Up(ctx, n), "connection refused")

	up := "up: {command: 'test {client_port} = PORT && test -f marker'}"
	d, n = describeLocal(t, strings.Replace(checksText, "up: {http: /up}", up, 1), "127.0.0.1:4321")
	require.ErrorContains(t, d.Up(ctx, n), "exited 1")
	dir := d.(*System).desc.Dir // the command runs in the description's directory
	require.NoError(t, os.WriteFile(filepath.Join(dir, "marker"), nil, 0o644))
	require.NoError(t, d.Up(ctx, n))
}

// leaderText probes /status for etcd-like member ids.
const leaderText = `name: mydb
ports: {client: PORT}
start: mydb
up: {tcp: client}
leader: {method: POST, path: /status, body: "{}", self: header.member_id, leader: leader}
client: {command: ./client}
`

// The leader probe names the node whose own id most answers name, and
// remembers ids: a leader that stops answering is still named.
func TestLeaderOnLoopbackAddresses(t *testing.T) {
	type status struct{ self, leader string }
	var mu sync.Mutex
	answers := map[string]status{"127.0.0.1": {"11", "22"}, "127.0.0.2": {"22", "22"}, "127.0.0.3": {"33", "11"}}
	var port string
	var nodes []db.Node
	for i, host := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		l, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			t.Skipf("cannot listen on %s: %v", host, err)
		}
		_, port, _ = net.SplitHostPort(l.Addr().String())
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			a, ok := answers[host]
			if !ok || r.Method != http.MethodPost {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintf(w, `{"header":{"member_id":"%s"},"leader":"%s"}`, a.self, a.leader)
		})}
		go func() { _ = srv.Serve(l) }()
		defer srv.Close()
		nodes = append(nodes, db.Node{Name: "n" + strconv.Itoa(i+1), Addr: host})
	}
	desc, err := Load(writeFile(t, "mydb.yaml", strings.ReplaceAll(leaderText, "PORT", port)))
	require.NoError(t, err)
	d, err := New(desc, db.Config{Nodes: nodes, Layout: db.Layout{DataDir: t.TempDir()}})
	require.NoError(t, err)
	lf := db.CapabilitiesOf(d).Leader
	ctx := context.Background()
	leader, err := lf.Leader(ctx, nodes)
	require.NoError(t, err)
	assert.Equal(t, "n2", leader)

	mu.Lock()
	delete(answers, "127.0.0.2") // the leader is paused: the others still name it
	answers["127.0.0.3"] = status{"33", "22"}
	mu.Unlock()
	leader, err = lf.Leader(ctx, nodes)
	require.NoError(t, err)
	assert.Equal(t, "n2", leader)

	mu.Lock()
	answers = map[string]status{"127.0.0.1": {"11", "0"}, "127.0.0.3": {"33", ""}}
	mu.Unlock()
	_, err = lf.Leader(ctx, nodes)
	require.EqualError(t, err, "no node names a leader")
}

// With storage faults a described system's data_dir is served through the
// fault file system: mounted before start, unmounted after stop, its
// backing directory and log wiped with the data, its log collected.
func TestStorageCommands(t *testing.T) {
	fs := &db.FaultFS{Binary: "/build/chaos", Upload: false, Path: "/build/chaos"}
	cfg := db.Config{Nodes: threeNodes, Layout: db.DefaultLayout(), Binary: "/build/chaos", Storage: fs}
	d, err := New(example(t, "etcd"), cfg)
	require.NoError(t, err)
	m := db.CapabilitiesOf(d).Storage.StorageMount(threeNodes[1])
	assert.Equal(t, "/var/lib/chaos/etcd/n2/data", m.Data, "data_dir")
	assert.Equal(t, fs, m.FS)
	ctx := context.Background()
	var rec remotetest.Recorder
	r := rec.Remote("n2", func(c remotetest.Call) (control.Result, error) {
		if strings.Contains(c.Cmd, "faultfs status") {
			return control.Result{Stdout: []byte(`{"pending_files":0,"undo_bytes":0,"pending_names":0}`)}, nil
		}
		return control.Result{}, nil
	})
	n := threeNodes[1]
	require.NoError(t, d.Install(ctx, r, n))
	require.NoError(t, d.Start(ctx, r, n))
	require.NoError(t, d.Stop(ctx, r, n))
	require.NoError(t, d.Wipe(ctx, r, n))
	require.NoError(t, d.CollectLogs(ctx, r, n, t.TempDir()))
	golden.Equal(t, "testdata/etcd-storage.golden", remotetest.Transcript(rec.Take()))
}
