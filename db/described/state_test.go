package described

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/db"
)

// describeNodes loads text as a description whose client port is the port
// of addr, and builds it for nodes n1, n2, n3, all at addr's host (the
// probes tell them apart by {id}).
func describeNodes(t *testing.T, text, addr string) (db.DB, []db.Node) {
	t.Helper()
	d, n := describeLocal(t, text, addr)
	nodes := []db.Node{n, {Name: "n2", Addr: n.Addr}, {Name: "n3", Addr: n.Addr}}
	s := d.(*System)
	d, err := New(s.desc, db.Config{Nodes: nodes, Layout: s.cfg.Layout})
	require.NoError(t, err)
	return d, nodes
}

const stateHTTPText = `name: mydb
ports: {client: PORT}
start: mydb
up: {tcp: client}
state: {path: "/raft/{id}", self: id, role: state, term: term, leader: lead, vote: vote, commit: progress.commit,
  applied: progress.applied, last_index: progress.last}
timing: {heartbeat: 20ms, election_timeout: 200ms, recovery: 15s}
client: {command: ./client}
`

// The state probe reads each node's fields by HTTP: roles in any
// spelling, numbers as numbers or strings, ids made node names through
// the nodes' own ids; a node that does not answer, or answers without a
// term, has no state. Without a leader probe, the leader is the one the
// states show.
func TestStatesOverHTTP(t *testing.T) {
	answers := map[string]string{
		"/raft/n1": `{"id":"11","state":"StateFollower","term":"7","lead":"22","vote":"22","progress":{"commit":40,"applied":39,"last":41}}`,
		"/raft/n2": `{"id":"22","state":"LEADER","term":7,"lead":"22","vote":"22","progress":{"commit":41,"applied":41,"last":42}}`,
		"/raft/n3": `{"id":"33","state":"PreCandidate","lead":"0"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	d, nodes := describeNodes(t, stateHTTPText, strings.TrimPrefix(srv.URL, "http://"))
	caps := db.CapabilitiesOf(d)
	require.NotNil(t, caps.States)
	assert.Nil(t, caps.Events)
	assert.Nil(t, caps.Hooks)
	assert.Equal(t, db.Timing{Heartbeat: 20 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, Recovery: 15 * time.Second}, caps.Timing)
	st, err := caps.States.States(context.Background(), nodes)
	require.NoError(t, err)
	assert.Equal(t, map[string]db.NodeState{
		"n1": {Role: db.RoleFollower, Term: 7, Leader: "n2", Vote: "n2", Commit: 40, Applied: 39, LastIndex: 41},
		"n2": {Role: db.RoleLeader, Term: 7, Leader: "n2", Vote: "n2", Commit: 41, Applied: 41, LastIndex: 42},
	}, st, "n3 answered without a term")
	leader, err := caps.Leader.Leader(context.Background(), nodes)
	require.NoError(t, err)
	assert.Equal(t, "n2", leader)

	answers["/raft/n2"] = `{"id":"22","state":"follower","term":8,"progress":{"commit":"x"}}`
	st, err = caps.States.States(context.Background(), nodes)
	require.NoError(t, err)
	assert.NotContains(t, st, "n2", "an index that is not a number spoils the answer")
	delete(answers, "/raft/n2")
	leader, err = caps.Leader.Leader(context.Background(), nodes)
	require.NoError(t, err)
	assert.Equal(t, "n2", leader, "the leader n1 names, by the id learned before")
	answers["/raft/n1"] = `{"id":"11","state":"follower","term":9}`
	_, err = caps.Leader.Leader(context.Background(), nodes)
	assert.EqualError(t, err, "no node names a leader")
}

const stateCommandText = `name: mydb
ports: {client: PORT}
start: mydb
up: {tcp: client}
state: {command: "./state.sh {id} {client_port}"}
events: "{log_dir}/events.jsonl"
leader: {path: /status, self: id, leader: leader}
client: {command: ./client}
`

// A state command runs on the controller, in the description's
// directory, once per node, and prints one JSON object; a command that
// fails, or prints something else, gives no state. A leader probe, when
// there is one, is the Leader capability; events name the event log.
func TestStatesByCommand(t *testing.T) {
	d, nodes := describeNodes(t, stateCommandText, "127.0.0.1:4321")
	dir := d.(*System).desc.Dir
	script := `case $1 in
n1) echo '{"role":"candidate","term":3,"leader":"n9","vote":"n1","commit":"10","applied":9,"last_index":12}' ;;
n2) echo "{\"term\":2,\"leader\":\"n2\",\"commit\":$2}" ;;
n3) echo 'not json' ;;
esac
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.sh"), []byte(script), 0o755))
	caps := db.CapabilitiesOf(d)
	require.NotNil(t, caps.States)
	assert.IsType(t, leaderProbe{}, caps.Leader, "the leader probe, not the states")
	st, err := caps.States.States(context.Background(), nodes)
	require.NoError(t, err)
	assert.Equal(t, map[string]db.NodeState{
		"n1": {Role: db.RoleCandidate, Term: 3, Vote: "n1", Commit: 10, Applied: 9, LastIndex: 12}, // n9 names no node
		"n2": {Role: db.RoleLeader, Term: 2, Leader: "n2", Commit: 4321},
	}, st, "n2 says no role, and names itself leader; n3 printed no JSON")
	assert.Equal(t, db.DefaultTiming(), caps.Timing, "no timing: the defaults, and no recovery bound")
	require.NotNil(t, caps.Events)
	assert.Equal(t, filepath.Join(d.(*System).Vars(nodes[1])[VarLogDir], "events.jsonl"), caps.Events.EventLog(nodes[1]))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.sh"), []byte("exit 3\n"), 0o755))
	st, err = caps.States.States(context.Background(), nodes)
	require.NoError(t, err)
	assert.Empty(t, st)
}

// Roles in the spellings systems use.
func TestNormalRole(t *testing.T) {
	for in, want := range map[string]string{"LEADER": db.RoleLeader, "StateFollower": db.RoleFollower,
		"StatePreCandidate": db.RolePreCandidate, "pre-candidate": db.RolePreCandidate, "Candidate": db.RoleCandidate,
		"Learner": "learner", "": ""} {
		assert.Equal(t, want, normalRole(in), in)
	}
}

const clockHTTPText = `name: mydb
ports: {client: PORT}
start: mydb
up: {tcp: client}
clock: {path: "/clock/{id}", now: time.now}
client: {command: ./client}
`

// The clock probe reads each node's time, in seconds since 1970 with
// fractions, from its answer; an answer without a number there is an
// error that names the field. A description without a clock probe has no
// Clocks capability.
func TestClockOverHTTP(t *testing.T) {
	answers := map[string]string{
		"/clock/n1": `{"time":{"now":1700000000.25}}`,
		"/clock/n2": `{"time":{"now":"soon"}}`,
		"/clock/n3": `{"time":{}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	d, nodes := describeNodes(t, clockHTTPText, strings.TrimPrefix(srv.URL, "http://"))
	clocks := db.CapabilitiesOf(d).Clocks
	require.NotNil(t, clocks)
	ctx := context.Background()
	at, err := clocks.NodeClock(ctx, nodes[0])
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1700000000, 250_000_000), at)
	_, err = clocks.NodeClock(ctx, nodes[1])
	assert.EqualError(t, err, `clock: time.now is soon, not a number of seconds since 1970`)
	_, err = clocks.NodeClock(ctx, nodes[2])
	assert.EqualError(t, err, "clock: no time.now in the answer")
	answers["/clock/n2"] = `{"time":{"now":-5}}`
	_, err = clocks.NodeClock(ctx, nodes[1])
	assert.EqualError(t, err, "clock: time.now -5 is not a time in seconds since 1970")
	delete(answers, "/clock/n3")
	_, err = clocks.NodeClock(ctx, nodes[2])
	assert.EqualError(t, err, "clock: status 404")

	d, _ = describeNodes(t, stateHTTPText, strings.TrimPrefix(srv.URL, "http://"))
	assert.Nil(t, db.CapabilitiesOf(d).Clocks)
}
