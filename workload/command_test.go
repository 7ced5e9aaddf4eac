package workload

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
)

// scriptClient is a client command in sh: it answers every request ok
// (reads: null, final reads: [1,2,3]) except the first write, which it
// mishandles as MISBEHAVE says, once per test (the file MARK remembers it
// across restarts). TAG, the test's name, is in the command line of
// every process of it, so that the test finds any left behind.
const scriptClient = `mark=MARK
while read -r line; do
  id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\).*/\1/')
  if [ ! -e "$mark" ] && printf '%s' "$line" | grep -q '"f":"write"'; then
    touch "$mark"
    MISBEHAVE
  fi
  case "$line" in
    *'"f":"read","key":""'*) echo "{\"id\":$id,\"type\":\"ok\",\"value\":[3,1,2]}" ;;
    *'"f":"read"'*) echo "{\"id\":$id,\"type\":\"ok\",\"value\":null}" ;;
    *) echo "{\"id\":$id,\"type\":\"ok\"}" ;;
  esac
done
`

// newScriptClient writes scriptClient with misbehave into a directory of
// t's and returns a client running it.
func newScriptClient(t *testing.T, misbehave string) *CommandClient {
	t.Helper()
	dir := t.TempDir()
	tag := strings.NewReplacer("/", "-", " ", "-", ";", "").Replace(t.Name())
	text := strings.NewReplacer("MARK", filepath.Join(dir, "mark"), "MISBEHAVE", misbehave).Replace(scriptClient)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "client.sh"), []byte(text), 0o755))
	c, err := NewCommandClient("n1", "sh ./client.sh "+tag, dir)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, c.Close())
		out, _ := exec.Command("pgrep", "-f", "client.sh "+tag+"$").CombinedOutput()
		assert.Empty(t, strings.TrimSpace(string(out)), "client processes left behind")
	})
	return c
}

func do(c Client, timeout time.Duration, op Op) history.Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.Do(ctx, op)
}

// A client command that behaves: requests and answers line by line.
func TestCommandClientAnswers(t *testing.T) {
	c := newScriptClient(t, "")
	assert.Equal(t, history.Outcome{Type: history.OK, Node: "n1", Value: (*int64)(nil)}, do(c, 5*time.Second, Op{F: history.FRead, Key: "k1"}))
	assert.Equal(t, history.Outcome{Type: history.OK, Node: "n1"}, do(c, 5*time.Second, Op{F: history.FCAS, Key: "k1", Value: [2]int64{1, 2}}))
	assert.Equal(t, history.Outcome{Type: history.OK, Node: "n1", Value: []int64{1, 2, 3}},
		do(c, 5*time.Second, Op{F: history.FRead, Attempted: []int64{1, 2, 3, 4}}))
	assert.Zero(t, c.Restarts())
}

// Each way a client command can fail: the operation in flight is info,
// the process is replaced at the next operation, which succeeds, and the
// restart is counted.
func TestCommandClientFailuresAreInfoAndRestart(t *testing.T) {
	cases := []struct{ name, misbehave, want string }{
		{"exits", "exit 3", "client command closed its stdout before answering request 2 (EOF); exit status 3"},
		{"hangs", "sleep 1000", "client command gave no answer to request 2 before the request timeout"},
		{"prints garbage", "echo 'not json'; continue", `client command printed an invalid answer to request 2 (not a JSON object: invalid character 'o' in literal null (expecting 'u')): not json`},
		{"answers another id", `echo '{"id":7,"type":"ok"}'; continue`, `client command printed an invalid answer to request 2 ("id" 7, but the request in flight is 2): {"id":7,"type":"ok"}`},
		{"answers a bad type", `echo "{\"id\":$id,\"type\":\"maybe\"}"; continue`, `client command printed an invalid answer to request 2 ("type" "maybe": want ok, fail or info)`},
		{"answers without an id", `echo '{"type":"ok"}'; continue`, `client command printed an invalid answer to request 2 (no "id")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newScriptClient(t, tc.misbehave)
			require.Equal(t, history.OK, do(c, 5*time.Second, Op{F: history.FRead, Key: "k1"}).Type)
			out := do(c, 300*time.Millisecond, Op{F: history.FWrite, Key: "k1", Value: int64(1)})
			assert.Equal(t, history.Info, out.Type)
			assert.Contains(t, out.Error, tc.want)
			assert.Equal(t, "n1", out.Node)
			assert.Zero(t, c.Restarts(), "the process is replaced at the next operation")
			assert.Equal(t, history.OK, do(c, 5*time.Second, Op{F: history.FWrite, Key: "k1", Value: int64(2)}).Type)
			assert.Equal(t, 1, c.Restarts())
		})
	}
}

// A read's answer must be an integer or null; a final read's a list.
func TestCommandClientRefusesBadValues(t *testing.T) {
	c := newScriptClient(t, `echo "{\"id\":$id,\"type\":\"ok\",\"value\":\"three\"}"; continue`)
	out := do(c, 5*time.Second, Op{F: history.FWrite, Key: "k1", Value: int64(1)})
	assert.Equal(t, history.OK, out.Type, "a write's value is not read")
	_, err := parseCommandAnswer([]byte(`{"id":1,"type":"ok","value":"three"}`), 1, Op{F: history.FRead, Key: "k1"})
	require.EqualError(t, err, `a read's "value" must be an integer or null, not "three"`)
	_, err = parseCommandAnswer([]byte(`{"id":1,"type":"ok","value":null}`), 1, Op{F: history.FRead})
	require.EqualError(t, err, `a final read's "value" must be a list of integers, not null`)
	got, err := parseCommandAnswer([]byte(`{"id":1,"type":"fail","error":"no leader","unavailable":true}`), 1, Op{F: history.FWrite})
	require.NoError(t, err)
	assert.Equal(t, history.Outcome{Type: history.Fail, Error: "no leader", Unavailable: true}, got)
}

// A process slow to start (an interpreter loading) gets StartGrace to
// answer its first request, past the request timeout.
func TestCommandClientStartGrace(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "slow.sh"), []byte(
		"sleep 0.5\nwhile read -r line; do id=$(printf '%s' \"$line\" | sed 's/^{\"id\":\\([0-9]*\\).*/\\1/'); echo \"{\\\"id\\\":$id,\\\"type\\\":\\\"ok\\\"}\"; done\n"), 0o755))
	c, err := NewCommandClient("n1", "sh ./slow.sh", dir)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, history.OK, do(c, 100*time.Millisecond, Op{F: history.FWrite, Key: "k", Value: int64(1)}).Type)

	c.StartGrace = 0
	require.NoError(t, c.Close())
	out := do(c, 100*time.Millisecond, Op{F: history.FWrite, Key: "k", Value: int64(2)})
	assert.Equal(t, history.Info, out.Type, "without a grace, a slow start is a timeout")
}

// A command that cannot start fails its operation: nothing was sent.
func TestCommandClientThatCannotStart(t *testing.T) {
	_, err := NewCommandClient("n1", "true", "/no/such/dir")
	require.ErrorContains(t, err, `client command "true" for n1: directory /no/such/dir: not a directory here`)
}

// A runner over a client whose command exits, hangs or prints garbage
// once goes on: that operation is info, every other one ok, the restart is
// counted, and the history is valid.
func TestRunnerGoesOnPastFailingClientCommands(t *testing.T) {
	for _, misbehave := range []string{"exit 3", "sleep 1000", "echo garbage; continue"} {
		t.Run(misbehave, func(t *testing.T) {
			c := newScriptClient(t, misbehave)
			gen, err := NewRegister(2)
			require.NoError(t, err)
			rec := newTestRecorder(t)
			r := newTestRunner(t, Config{Clients: []Client{c}, MaxOps: 20, Generator: gen, Recorder: rec, Seed: 1,
				RequestTimeout: 300 * time.Millisecond})
			stats, err := r.Run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, Stats{Elapsed: stats.Elapsed, Invoked: 20, OK: 19, Info: 1}, stats)
			assert.Equal(t, 1, c.Restarts())
			h := rec.Ops()
			require.NoError(t, history.Validate(h))
			assert.Equal(t, checker.Valid, checkAll(t, h).Checks["stats"].Valid)
		})
	}
}
