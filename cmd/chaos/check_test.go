package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
)

// execute runs the chaos command line as main would and returns the exit
// code, stdout and stderr.
func execute(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	var ee *exitError
	switch {
	case err == nil:
		code = exitOK
	case errors.As(err, &ee):
		code = ee.code
		if ee.err != nil {
			errOut.WriteString(ee.err.Error())
		}
	default:
		code = exitUsage
		errOut.WriteString(err.Error())
	}
	return code, out.String(), errOut.String()
}

// op is one history line; times are milliseconds.
func op(index, ms, process int, typ, f, key, value string) string {
	line := fmt.Sprintf(`{"index":%d,"time":%d,"process":%d,"type":%q,"f":%q`, index, ms*1_000_000, process, typ, f)
	if key != "" {
		line += fmt.Sprintf(`,"key":%q`, key)
	}
	if value != "" {
		line += `,"value":` + value
	}
	return line + "}\n"
}

// A register history whose read of k3 is stale.
var staleRead = op(0, 100, 0, "invoke", "write", "k3", "7") + op(1, 110, 0, "ok", "write", "k3", "7") +
	op(2, 120, 1, "invoke", "write", "k3", "9") + op(3, 130, 1, "ok", "write", "k3", "9") +
	`{"index":4,"time":135000000,"process":"nemesis","type":"info","f":"kill","value":["n1"]}` + "\n" +
	op(5, 140, 2, "invoke", "read", "k3", "null") + op(6, 150, 2, "ok", "read", "k3", "7")

var goodRegister = op(0, 1, 0, "invoke", "write", "k1", "1") + op(1, 2, 0, "ok", "write", "k1", "1") +
	op(2, 3, 0, "invoke", "read", "k1", "null") + op(3, 4, 0, "ok", "read", "k1", "1")

var goodSet = op(0, 1, 0, "invoke", "add", "", "1") + op(1, 2, 0, "ok", "add", "", "1") +
	op(2, 3, 0, "invoke", "read", "", "null") + op(3, 4, 0, "ok", "read", "", "[1]")

// runDir makes a run directory holding history.
func runDir(t *testing.T, history string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(history), 0o644))
	return dir
}

func readResults(t *testing.T, dir string) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	var r map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &r))
	return r
}

func TestCheckValidRunDirectory(t *testing.T) {
	dir := runDir(t, goodRegister)
	code, out, errOut := execute(t, "check", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "linearizable: true")
	assert.Contains(t, out, "stats: true")
	assert.Contains(t, out, "valid: true")
	r := readResults(t, dir)
	assert.JSONEq(t, "true", string(r["valid"]))
	assert.JSONEq(t, `{"invoke":2,"ok":2,"fail":0,"info":0}`, string(r["ops"]))
	assert.NoDirExists(t, filepath.Join(dir, "linearizable"))
	assert.Contains(t, out, "report:  "+filepath.Join(dir, "report.html"))
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `id="verdict" class="verdict valid">true<`)
}

func TestCheckInvalidHistoryFile(t *testing.T) {
	dir := runDir(t, staleRead)
	code, out, _ := execute(t, "check", filepath.Join(dir, "history.jsonl"))
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, out, "linearizable: false")
	assert.Contains(t, out, "key k3: process 2 read 7 at 0.140–0.150 s, but 7 was overwritten by 9")
	assert.Contains(t, out, "see "+filepath.Join("linearizable", "key-k3.html"))
	assert.FileExists(t, filepath.Join(dir, "linearizable", "key-k3.html"))
	r := readResults(t, dir)
	assert.JSONEq(t, "false", string(r["valid"]))
	var checks map[string]map[string]any
	require.NoError(t, json.Unmarshal(r["checks"], &checks))
	assert.Equal(t, []any{"k3"}, checks["linearizable"]["invalid_keys"])
	// chaos check rewrites the report too, with a link to the failing key.
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `<a href="linearizable/key-k3.html">`)
}

func TestCheckUnknownWhenTheSearchTimesOut(t *testing.T) {
	// Thirty writes of 1, 2 and 3 in flight while one reader sees 1 and 2
	// alternate eleven times: no short argument, an exponential search.
	var b strings.Builder
	i := 0
	for p := 0; p < 30; p++ {
		b.WriteString(op(i, i, p, "invoke", "write", "k", fmt.Sprint(1+p%3)))
		i++
	}
	for r := 0; r < 21; r++ {
		b.WriteString(op(i, i, 30, "invoke", "read", "k", ""))
		b.WriteString(op(i+1, i+1, 30, "ok", "read", "k", fmt.Sprint(1+r%2)))
		i += 2
	}
	for p := 0; p < 30; p++ {
		b.WriteString(op(i, i, p, "ok", "write", "k", fmt.Sprint(1+p%3)))
		i++
	}
	dir := runDir(t, b.String())
	code, out, _ := execute(t, "check", "--checker-timeout", "50ms", dir)
	assert.Equal(t, exitUnknown, code)
	assert.Contains(t, out, "linearizable: unknown")
	assert.Contains(t, out, "did not finish for 1 of 1 keys")
	assert.JSONEq(t, `"unknown"`, string(readResults(t, dir)["valid"]))
}

func TestCheckSetWorkload(t *testing.T) {
	dir := runDir(t, goodSet)
	code, out, errOut := execute(t, "check", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "set: true")
	assert.Contains(t, out, "0 lost, 0 unexpected")

	code, _, errOut = execute(t, "check", "--workload", "register", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `f "add" is not a register operation`)
}

// A list-append history (write skew) is checked by the list-append
// check: invalid under the default strict serializability, valid under
// snapshot isolation, its anomaly in words either way; a register
// history is no list-append one.
func TestCheckListAppendWorkload(t *testing.T) {
	dir := runDir(t, strings.Join([]string{
		op(0, 1, 0, "invoke", "txn", "", `[["r","x",null],["r","y",null],["append","x",1]]`),
		op(1, 2, 1, "invoke", "txn", "", `[["r","x",null],["r","y",null],["append","y",2]]`),
		op(2, 3, 0, "ok", "txn", "", `[["r","x",[]],["r","y",[]],["append","x",1]]`),
		op(3, 4, 1, "ok", "txn", "", `[["r","x",[]],["r","y",[]],["append","y",2]]`),
		op(4, 5, 2, "invoke", "txn", "", `[["r","x",null],["r","y",null]]`),
		op(5, 6, 2, "ok", "txn", "", `[["r","x",[1]],["r","y",[2]]]`),
	}, ""))
	code, out, errOut := execute(t, "check", dir)
	assert.Equal(t, exitInvalid, code, errOut)
	assert.Contains(t, out, "list-append: false")
	assert.Contains(t, out, "G2-item (forbidden): T0 read y as empty, before T1's append of 2")
	var checks map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(readResults(t, dir)["checks"], &checks))
	var la struct {
		AnomalyTypes []string `json:"anomaly_types"`
	}
	require.NoError(t, json.Unmarshal(checks["list-append"], &la))
	assert.Equal(t, []string{"G2-item"}, la.AnomalyTypes)

	code, out, errOut = execute(t, "check", "--consistency-model", "snapshot-isolation", "--export", "elle", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "G2-item (allowed by snapshot-isolation)")
	edn, err := os.ReadFile(filepath.Join(dir, "history.edn"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(edn)), "\n")
	require.Len(t, lines, 6)
	assert.Equal(t, `{:index 5 :time 6000000 :process 2 :type :ok :f :txn :value[[:r"x"[1]][:r"y"[2]]]}`, lines[5])

	bad := runDir(t, op(0, 1, 0, "invoke", "txn", "", `[["append","x",1]]`)+op(1, 2, 0, "ok", "txn", "", `[["append","x","one"]]`))
	code, _, errOut = execute(t, "check", "--export", "elle", bad)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--export elle: elle: op 1: micro-operation 0:")
	assert.NoFileExists(t, filepath.Join(bad, "history.edn"))
	entries, err := os.ReadDir(bad)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".history.edn", "no temporary file left")
	}

	code, _, errOut = execute(t, "check", "--workload", "list-append", runDir(t, goodRegister))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `is not a list-append operation (txn)`)
}

func TestCheckTornFinalLineIsAWarning(t *testing.T) {
	dir := runDir(t, goodRegister+`{"index":4,"time":5000000,"pro`)
	code, _, errOut := execute(t, "check", dir)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errOut, "chaos: warning: "+filepath.Join(dir, "history.jsonl")+":5: torn final line skipped")
}

// An event log that cannot be read leaves the raft check undecided: the
// verdict is unknown, never valid, and says why.
func TestCheckUnreadableEventLogIsUnknown(t *testing.T) {
	dir := runDir(t, goodRegister)
	events := filepath.Join(dir, "nodes", "n1", "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(events), 0o755))
	require.NoError(t, os.WriteFile(events, []byte("garbage\n"), 0o644))
	code, out, _ := execute(t, "check", dir)
	assert.Equal(t, exitUnknown, code)
	assert.Contains(t, out, "raft: unknown")
	assert.Contains(t, out, "the event logs cannot be read: "+events+": events line 1")
	assert.JSONEq(t, `"unknown"`, string(readResults(t, dir)["valid"]))
}

// A torn line that ends a killed node's life is skipped, and the raft
// check says so.
func TestCheckTornEventLineIsSaid(t *testing.T) {
	dir := runDir(t, goodRegister)
	events := filepath.Join(dir, "nodes", "n1", "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(events), 0o755))
	start := `{"time":"2026-11-22T10:00:00Z","event":"start","node":"n1","term":1}` + "\n"
	require.NoError(t, os.WriteFile(events, []byte(start+`{"time":"2026-11-22T10:00:01Z","ev`+"\n"+start), 0o644))
	code, out, _ := execute(t, "check", dir)
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "raft: true")
	assert.Contains(t, out, "1 event-log lines skipped, first "+events+": line 2: torn line skipped")
}

func TestCheckBadInput(t *testing.T) {
	invoke := op(0, 1, 0, "invoke", "read", "k", "")
	cases := []struct {
		name, history, want string
	}{
		{"empty file", "", "history.jsonl: history is empty"},
		{"not JSON", invoke + "{oops\n", "history.jsonl:2: not JSON"},
		{"unknown type", strings.Replace(invoke, "invoke", "crash", 1), `history.jsonl:1: unknown type "crash"`},
		{"completion without invoke", op(0, 1, 4, "ok", "read", "k", "1"),
			`history.jsonl:1: invalid history: ok "read" for process 4, which has no open invoke`},
		{"two open ops", invoke + op(1, 2, 0, "invoke", "write", "k", "3"),
			`history.jsonl:2: invalid history: process 0 invokes "write" while its op 0 ("read") is still open`},
		{"write of a string", op(0, 1, 0, "invoke", "write", "k", `"x"`) + op(1, 2, 0, "ok", "write", "k", ""),
			`write value "x", want an integer`},
	}
	for _, c := range cases {
		dir := runDir(t, c.history)
		code, _, errOut := execute(t, "check", dir)
		assert.Equal(t, exitUsage, code, c.name)
		assert.Contains(t, errOut, c.want, c.name)
		assert.Equal(t, 0, strings.Count(strings.TrimSpace(errOut), "\n"), "%s: one line: %q", c.name, errOut)
		assert.NoFileExists(t, filepath.Join(dir, "results.json"), c.name)
	}
}

func TestCheckBadArguments(t *testing.T) {
	dir := runDir(t, goodRegister)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "accepts 1 arg"},
		{[]string{"check", filepath.Join(dir, "nope")}, "does not exist: give a run directory holding history.jsonl"},
		{[]string{"check", t.TempDir()}, "history.jsonl does not exist"},
		{[]string{"check", "--workload", "queue", dir}, `--workload "queue": want register, set or list-append`},
		{[]string{"check", "--consistency-model", "linearizable", dir}, `--consistency-model "linearizable": want one of strict-serializable, `},
		{[]string{"check", "--export", "knossos", dir}, `--export "knossos": want elle`},
		{[]string{"check", "--checker-timeout", "-1s", dir}, "--checker-timeout -1s is negative"},
		{[]string{"check", "--checker-timeout", "soon", dir}, "invalid argument"},
	} {
		code, _, errOut := execute(t, c.args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	assert.Equal(t, exitUsage, run([]string{"check", filepath.Join(dir, "nope")}), "main maps it to 254 too")
}

func TestCheckKeepsARunsResults(t *testing.T) {
	dir := runDir(t, goodRegister)
	run := `{"valid":true,"name":"t","seed":42,"checks":{"raft":{"valid":false,"anomalies":["two leaders in term 3"]}}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte(run), 0o644))
	code, out, _ := execute(t, "check", dir)
	assert.Equal(t, exitInvalid, code, "raft's verdict still counts")
	assert.Contains(t, out, "valid: false")
	r := readResults(t, dir)
	assert.JSONEq(t, "42", string(r["seed"]))
	assert.Contains(t, string(r["checks"]), "two leaders in term 3")
	assert.Contains(t, string(r["checks"]), `"linearizable"`)

	// summary.json is rewritten with results.json.
	s, err := checker.ReadSummary(filepath.Join(dir, checker.SummaryFile))
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	assert.Equal(t, st.Size(), s.ResultsSize)
	assert.Equal(t, checker.Invalid, s.Valid)
	assert.Equal(t, uint64(42), s.Seed)
	assert.Equal(t, checker.Invalid, s.Checks["raft"])
	assert.Equal(t, checker.Valid, s.Checks["linearizable"])
}

// Issue 39: a store written before the fault records were typed still
// checks and reports. nemesis/testdata/fault-records.golden holds every
// family's op values as chaos wrote them then (the golden predates the
// types and has not changed since): a history carrying all of them
// beside a valid register load checks valid, and its report describes
// each fault without one undecodable value.
func TestCheckReadsEveryFamilysRecordsAsWrittenBefore(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("..", "..", "nemesis", "testdata", "fault-records.golden"))
	require.NoError(t, err)
	var b strings.Builder
	index, ms := 0, 1
	write := func(line string) { b.WriteString(line); index++; ms++ }
	for _, line := range strings.Split(string(golden), "\n") {
		rest, ok := strings.CutPrefix(line, "op ")
		if !ok {
			continue
		}
		f, value, _ := strings.Cut(rest, " ")
		key, v := fmt.Sprintf("k%d", ms%5), fmt.Sprint(index)
		write(op(index, ms, 0, "invoke", "write", key, v))
		write(op(index, ms, 0, "ok", "write", key, v))
		write(fmt.Sprintf(`{"index":%d,"time":%d,"process":"nemesis","type":"info","f":%q,"value":%s}`+"\n",
			index, ms*1_000_000, f, value))
	}
	require.Greater(t, index, 150, "every family's records")
	write(fmt.Sprintf(`{"index":%d,"time":%d,"process":"nemesis","type":"info","f":"heal","value":{"faults":["kill"]}}`+"\n",
		index, ms*1_000_000))
	for range 3 { // the load goes on after the heal
		write(op(index, ms, 0, "invoke", "read", "k9", "null"))
		write(op(index, ms, 0, "ok", "read", "k9", "null"))
	}
	dir := runDir(t, b.String())
	code, out, errOut := execute(t, "check", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "valid: true")
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.NotContains(t, string(page), "undecodable")
	assert.NotContains(t, string(page), "do not decode")
	for _, family := range []string{"kill", "partition", "clock", "packet", "power-loss", "corrupt", "figure8", "member"} {
		assert.Contains(t, string(page), "<td>"+family+"</td>", "the report's fault table has %s", family)
	}
}
