package described

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// minimal is the smallest valid description; tests break one line of it.
const minimal = `name: mydb
ports: {client: 7000, peer: 7001}
members: {each: "{id}={peer_addr}"}
start: mydb --id {id} --peers {members} --data {data_dir}
up: {http: /health}
client:
  command: ./client --addr {client_addr}
`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestLoadMinimal(t *testing.T) {
	d, err := Load(writeFile(t, "mydb.yaml", minimal))
	require.NoError(t, err)
	assert.Equal(t, "mydb", d.Name)
	assert.Equal(t, 7000, d.Ports.Client)
	assert.True(t, filepath.IsAbs(d.Dir))
	assert.Equal(t, []string{"id", "members", "data_dir"}, d.Start.Names())
}

// Every example in the repository loads.
func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob("../../examples/systems/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		d, err := Load(f)
		require.NoError(t, err, f)
		require.NoError(t, d.Supports("register"), f)
		require.NoError(t, d.Supports("set"), f)
	}
}

// A bad file is one line: the file, the line, what is wrong and how to fix
// it. The four kinds the issue names first, then the rest of validation.
func TestLoadRefusesBadFiles(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		want       string
	}{
		{"does not parse", "name: mydb\nports: {client: 7000\nstart: x\n", 2,
			"not valid YAML: did not find expected ',' or '}'; fix the syntax (indentation, quotes, brackets) there"},
		{"unknown key", strings.Replace(minimal, "up: {http: /health}", "up: {http: /health, timeout: 3}", 1), 5,
			`unknown key "timeout" in up; the keys there are body_contains, command, http, status, tcp: fix the spelling or remove it`},
		{"unknown top-level key", minimal + "wipes: rm -rf /\n", 8,
			`unknown key "wipes" at the top level; the keys there are binary, client, clock, events, leader, logs, members, name, pidfile, ports, ready, start, state, timing, up, upload, wipe: fix the spelling or remove it`},
		{"missing required field", strings.Replace(minimal, "start: mydb --id {id} --peers {members} --data {data_dir}\n", "", 1), 1,
			"no start; add start: the shell command line that runs one node in the foreground, such as: mydb --name {id} --listen {client_addr}"},
		{"unknown template variable", strings.Replace(minimal, "{data_dir}", "{datadir}", 1), 4,
			"unknown variable {datadir} in start; the variables there are addr, bin_dir, bug_flags, client_addr, client_port, data_dir, id, log_dir, members, peer_addr, peer_port: fix the name, or leave the braces out"},
		{"peer variable without a peer port", strings.Replace(minimal, ", peer: 7001", "", 1), 3,
			"unknown variable {peer_addr} in members.each; the variables there are addr, bin_dir, client_addr, client_port, data_dir, id, log_dir: set ports.peer to use it"},
		{"operation variable out of place", strings.Replace(minimal, "  command: ./client --addr {client_addr}\n",
			"  http:\n    read:\n      path: /kv/{value}\n      answers: [{status: 200, type: ok}]\n", 1), 9,
			"unknown variable {value} in client.http.read; the variables there are addr, bin_dir, client_addr, client_port, data_dir, id, key, key_b64, log_dir, members, peer_addr, peer_port, read_consistency, serializable: fix the name, or leave the braces out"},
		{"empty", "", 1, "the description is empty; start from examples/systems/chaos-node.yaml"},
		{"no name", strings.Replace(minimal, "name: mydb\n", "", 1), 1, "no name; add name: a short name for the system, such as mydb"},
		{"bad name", strings.Replace(minimal, "name: mydb", "name: My DB", 1), 1,
			`name "My DB": use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"no client port", strings.Replace(minimal, "client: 7000, ", "", 1), 2,
			"no ports.client; add ports: {client: PORT}, the port clients reach each node at"},
		{"no up", strings.Replace(minimal, "up: {http: /health}\n", "", 1), 1,
			"no up; add up: {http: /path} (a GET that answers 200), {tcp: client} or {command: ...} to tell that a node answers"},
		{"two kinds of up", strings.Replace(minimal, "{http: /health}", "{http: /health, tcp: client}", 1), 5,
			"up has more than one of http, tcp and command; keep one"},
		{"bad tcp", strings.Replace(minimal, "{http: /health}", "{tcp: admin}", 1), 5,
			`up.tcp: "admin": want client, peer or a port number`},
		{"no client", strings.Replace(minimal, "client:\n  command: ./client --addr {client_addr}\n", "", 1), 1,
			`no client; add client: {command: ...} (a client process, README "Your own system") or client: {http: ...} (request templates)`},
		{"members without each", strings.Replace(minimal, "members: {each: \"{id}={peer_addr}\"}\n", "", 1), 3,
			`{members} is used but members.each is not set; add members: {each: "{id}={peer_addr}", separator: ","}`},
		{"string expected", strings.Replace(minimal, "start: mydb", "start: [mydb]\nx: mydb", 1), 4,
			"want a string here, not a list; quote the value"},
		{"bad status", strings.Replace(minimal, "  command: ./client --addr {client_addr}\n",
			"  http:\n    read: {path: \"/kv/{key}\", answers: [{status: 2000, type: ok}]}\n", 1), 8,
			`status "2000" is not an HTTP status code; write one such as 200, or a list such as [500, 503]`},
		{"bad rule type", strings.Replace(minimal, "  command: ./client --addr {client_addr}\n",
			"  http:\n    read:\n      path: /kv/{key}\n      answers:\n        - {status: 200, type: good}\n", 1), 11,
			`answer rule type "good": want ok, fail or info`},
		{"set_read without a list", strings.Replace(minimal, "  command: ./client --addr {client_addr}\n",
			"  http:\n    set_read:\n      path: /all\n      answers:\n        - {status: 200, type: ok, value: items.0}\n", 1), 11,
			"an ok set_read answer needs value: a path with a * that lists the elements, such as kvs.*.value"},
		{"value on a write", strings.Replace(minimal, "  command: ./client --addr {client_addr}\n",
			"  http:\n    write:\n      path: /kv/{key}\n      answers:\n        - {status: 200, type: ok, value: v}\n", 1), 11,
			"only read and set_read answers have a value; remove value"},
		{"missing upload", minimal + "upload:\n  - {src: no-such-file, dest: \"{bin_dir}/mydb\"}\n", 9,
			"upload src " + "DIR/no-such-file is not a file here; give a path relative to this file's directory, or an absolute one"},
		{"bad mode", minimal + "upload:\n  - {src: \"{chaos_binary}\", dest: \"{bin_dir}/mydb\", mode: rwx}\n", 9,
			`mode "rwx" is not an octal file mode; write one such as 0755`},
		{"clock without a path", minimal + "clock: {now: now}\n", 8,
			"clock has no path; add path: the HTTP path whose answer tells the node's time, such as /clock"},
		{"clock without now", minimal + "clock: {path: /clock}\n", 8,
			"clock needs now: the answer's field holding the node's time in seconds since 1970, such as now: now"},
		{"clock now with a star", minimal + "clock: {path: /clock, now: times.*}\n", 8,
			"clock's now names one field; remove the *"},
		{"clock path without a slash", minimal + "clock: {path: clock, now: now}\n", 8,
			`clock path "clock" does not begin with /; write the path on the node, such as /clock`},
		{"leader without fields", minimal + "leader: {path: /status}\n", 8,
			"leader needs self and leader: the answer's fields holding the node's own id and its leader's, such as self: id, leader: leader"},
		{"state without a way to ask", minimal + "state: {term: term}\n", 8,
			`state has neither path nor command; add path: the HTTP path that tells a node's state, with term: and the other fields of its answer, or command: a shell command printing {"role": ..., "term": ...}`},
		{"state without a term", minimal + "state: {path: /status, role: role}\n", 8,
			"state needs term: the field of the answer holding the node's term, such as term"},
		{"state with both ways", minimal + "state: {path: /status, command: ./state, term: term}\n", 8,
			"state has both path and command; keep one"},
		{"state command with field paths", minimal + "state: {command: \"./state {id}\", term: raft.term}\n", 8,
			"state has command and HTTP keys (method, body, headers, or field paths such as term); a state command prints one JSON object with the keys role, term, leader, vote, commit, applied, last_index, self: remove the HTTP keys"},
		{"state field with a star", minimal + "state: {path: /status, term: terms.*}\n", 8,
			"state's fields name one field each; remove the * from terms.*"},
		{"state path without a slash", minimal + "state: {path: status, term: term}\n", 8,
			`state path "status" does not begin with /; write the path on the node, such as /status`},
		{"state variable out of place", minimal + "state: {command: \"./state {key}\"}\n", 8,
			"unknown variable {key} in state; the variables there are addr, bin_dir, client_addr, client_port, data_dir, id, log_dir, members, peer_addr, peer_port: fix the name, or leave the braces out"},
		{"state command quoting a variable", minimal + "state: {command: \"./state '{id}'\"}\n", 8,
			"{id} is inside '...' quotes in state.command; variables are quoted for you: remove the quotes around {id}"},
		{"events variable out of place", minimal + "events: \"{value}/events.jsonl\"\n", 8,
			"unknown variable {value} in events; the variables there are addr, bin_dir, client_addr, client_port, data_dir, id, log_dir, members, peer_addr, peer_port: fix the name, or leave the braces out"},
		{"bad duration", minimal + "timing: {heartbeat: 50}\n", 8,
			`duration "50": write a positive duration with its unit, such as 50ms, 1s or 1m30s`},
		{"heartbeat not below the election timeout", minimal + "timing: {heartbeat: 2s}\n", 8,
			"timing: heartbeat 2s is not shorter than election_timeout 1s; a follower would campaign between two heartbeats: give the system's own values (default heartbeat 100ms, election_timeout 1s)"},
		{"unknown timing key", minimal + "timing: {election: 1s}\n", 8,
			`unknown key "election" in timing; the keys there are election_timeout, heartbeat, recovery: fix the spelling or remove it`},
		{"both clients", strings.Replace(minimal, "client:\n", "client:\n  http: {read: {path: /x, answers: [{type: ok}]}}\n", 1), 6,
			"client has both http and command; keep one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, "mydb.yaml", c.text)
			_, err := Load(p)
			require.Error(t, err)
			var de *Error
			require.ErrorAs(t, err, &de)
			want := strings.ReplaceAll(c.want, "DIR", filepath.Dir(p))
			assert.Equal(t, p+":"+strconv.Itoa(c.line)+": "+want, err.Error())
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("/no/such/mydb.yaml")
	require.EqualError(t, err, "/no/such/mydb.yaml: cannot read the description (no such file or directory); give the path of a .yaml file")
}

func TestIsPath(t *testing.T) {
	for name, want := range map[string]bool{"etcd": false, "chaos-node": false, "x.yaml": true, "a/b.YML": true, "x.json": false} {
		assert.Equal(t, want, IsPath(name), name)
	}
}

// A workload that needs operations the HTTP templates lack is refused,
// and --bug is refused for a start without {bug_flags}.
func TestSupportsAndCheckBugs(t *testing.T) {
	text := strings.Replace(minimal, "  command: ./client --addr {client_addr}\n",
		"  http:\n    add: {path: \"/add/{value}\", answers: [{status: 200, type: ok}]}\n    set_read: {path: /all, answers: [{status: 200, type: ok, value: \"*\"}]}\n", 1)
	p := writeFile(t, "mydb.yaml", text)
	d, err := Load(p)
	require.NoError(t, err)
	require.NoError(t, d.Supports("set"))
	require.EqualError(t, d.Supports("register"), p+":7: client.http has no read, which the register workload needs; add read, write, cas")
	require.NoError(t, d.CheckBugs(nil))
	require.EqualError(t, d.CheckBugs([]string{"stale-read"}),
		p+":4: --bug plants bugs through {bug_flags}, which start does not use; add {bug_flags} to start, or run without --bug")
}
