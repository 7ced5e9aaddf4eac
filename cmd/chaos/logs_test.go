package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/foreignlog"
)

// seedLog returns the path of a seed log in foreignlog/testdata/seeds (the
// real logs of other Raft implementations, kept in the repository).
func seedLog(t *testing.T, prefix string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join("..", "..", "foreignlog", "testdata", "seeds", prefix+"_*.txt"))
	require.Len(t, matches, 1, "seed log %s", prefix)
	return matches[0]
}

// The text output of each seed says, at a glance, what a person reading
// the file would say.
func TestLogsSeedsText(t *testing.T) {
	cases := []struct {
		seed string
		want []string
	}{
		{"000", []string{"format splay", "term 1    node 5 ", "term 17   node 1 ", "1 terms without a leader: 9;", "15 crash, 15 restart", "Two leaders in one term: none"}},
		{"001", []string{"format table", "term 1    node 2 ", "term 2    node 3 ", "1 disconnect, 1 reconnect, 5 stop", "every term had a leader", "| LEADER t1"}},
		{"002", []string{"format etcd-trace", "term 10   node 1 ", "term 11   node 2 "}},
		{"003", []string{"format course", "term 127  node 2 ", "22 terms without a leader: 121-126, 128-143; longest run 16 terms (128..143)", "one(9000) failed to reach agreement"}},
		{"004", []string{"format eliben", "none: no node became leader", "71 terms without a leader: 1-71", "still none at the end", "leader not found"}},
	}
	for _, c := range cases {
		code, out, stderr := execute(t, "logs", seedLog(t, c.seed))
		require.Equal(t, exitOK, code, c.seed+": "+stderr)
		for _, w := range c.want {
			assert.Contains(t, out, w, c.seed)
		}
	}
}

func TestLogsUnparsedLinesWarn(t *testing.T) {
	code, _, stderr := execute(t, "logs", seedLog(t, "003"))
	require.Equal(t, exitOK, code)
	assert.Contains(t, stderr, "19 of 997 non-blank lines are not in format course (lines 268, 273,")
}

func TestLogsJSON(t *testing.T) {
	code, out, _ := execute(t, "logs", "--json", seedLog(t, "002"))
	require.Equal(t, exitOK, code)
	var reports []foreignlog.Report
	require.NoError(t, json.Unmarshal([]byte(out), &reports))
	require.Len(t, reports, 1)
	f := reports[0].Facts
	require.Len(t, f.Leaders, 2)
	assert.Equal(t, []string{"1", "2"}, []string{f.Leaders[0].Node, f.Leaders[1].Node})
	assert.Equal(t, []int{10, 11}, []int{f.Leaders[0].Term, f.Leaders[1].Term})
	assert.Equal(t, "etcd-trace", reports[0].Logs[0].Format)
}

func TestLogsHTML(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.html")
	code, out, _ := execute(t, "logs", "--html", page, seedLog(t, "000"))
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "Leaders per term:")
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(html), `<td class="leader">LEADER t1</td>`)
	assert.Contains(t, string(html), `<td class="down">CRASH</td>`)
	// The same timeline drawn over time, by the code a run's report uses.
	assert.Contains(t, string(html), `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="timeline-1"`)
	assert.Contains(t, string(html), `<g class="span leader">`)
}

// The event logs of one run's nodes are analysed together: a leader of
// term 1 on n1, n1 killed (restarted without a stop), n2 leads term 2, and
// n3 also claims term 2.
func TestLogsChaosEventLogsTogether(t *testing.T) {
	dir := t.TempDir()
	write := func(node string, lines ...string) string { return writeEventLog(t, dir, node, lines...) }
	line := func(sec, node, rest string) string {
		return `{"time":"2026-01-02T10:00:0` + sec + `Z","node":"` + node + `",` + rest + `}`
	}
	n1 := write("n1", line("0", "n1", `"event":"start"`), line("1", "n1", `"event":"role","role":"leader","term":1`), line("5", "n1", `"event":"start"`))
	n2 := write("n2", line("0", "n2", `"event":"start"`), line("3", "n2", `"event":"role","role":"leader","term":2`))
	n3 := write("n3", line("0", "n3", `"event":"start"`), line("4", "n3", `"event":"role","role":"leader","term":2`))
	code, out, stderr := execute(t, "logs", "--json", n1, n2, n3)
	require.Equal(t, exitInvalid, code, "two leaders in term 2: "+stderr)
	var reports []foreignlog.Report
	require.NoError(t, json.Unmarshal([]byte(out), &reports))
	require.Len(t, reports, 1)
	f := reports[0].Facts
	assert.Equal(t, []string{"n1", "n2", "n3"}, f.Nodes)
	assert.Equal(t, []int{2}, f.TwoLeaderTerms)
	require.Len(t, f.Faults, 2)
	assert.Equal(t, foreignlog.Fault{At: 5e9, Node: "n1", Kind: "crash", Inferred: true, Line: 3}, f.Faults[0])

	code, out, _ = execute(t, "logs", n1, n2, n3)
	require.Equal(t, exitInvalid, code)
	assert.Contains(t, out, "TWO LEADERS IN ONE TERM: terms 2")
}

// A real run's event logs: the forget-vote script of node's tests let n2
// and then n1 lead term 4, and killed and restarted n3 (see
// raftcheck/testdata/real).
func TestLogsRealForgetVoteRun(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join("..", "..", "raftcheck", "testdata", "real", "forget-vote", "nodes", "*", "events.jsonl"))
	require.NoError(t, err)
	require.Len(t, logs, 3)
	code, out, stderr := execute(t, "logs", "--json", logs[0], logs[1], logs[2])
	require.Equal(t, exitInvalid, code, "two leaders in term 4: "+stderr)
	var reports []foreignlog.Report
	require.NoError(t, json.Unmarshal([]byte(out), &reports))
	require.Len(t, reports, 1)
	f := reports[0].Facts
	assert.Equal(t, []int{4}, f.TwoLeaderTerms)
	var n3 []string
	for _, fault := range f.Faults {
		if fault.Node == "n3" {
			n3 = append(n3, fault.Kind)
		}
	}
	assert.Equal(t, []string{"crash", "restart", "stop"}, n3)
}

// testdataRun returns the event logs of a run kept under raftcheck/testdata.
func testdataRun(t *testing.T, run string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join("..", "..", "raftcheck", "testdata", run, "nodes", "*", "events.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, logs, run)
	return logs
}

// chaos logs exits 0 for logs without a term with two leaders and 1 for
// logs with one, whatever the output; bad input is 254 (TestLogsBadInput).
func TestLogsExitCodes(t *testing.T) {
	for _, c := range []struct {
		run  string
		want int
	}{
		{"clean", exitOK},
		{"real/forget-vote-correct", exitOK},
		{"real/forget-vote", exitInvalid}, // n2 and n1 both led term 4
	} {
		for _, flags := range [][]string{nil, {"--json"}, {"--html", "-"}} {
			args := append(append([]string{"logs"}, flags...), testdataRun(t, c.run)...)
			code, out, stderr := execute(t, args...)
			assert.Equal(t, c.want, code, "%s %v: %s", c.run, flags, stderr)
			assert.NotEmpty(t, out, "%s %v: the report is printed whatever the verdict", c.run, flags)
			assert.Empty(t, stderr, "%s %v", c.run, flags)
		}
	}
}

func TestLogsBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.log")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	prose := filepath.Join(dir, "prose.log")
	require.NoError(t, os.WriteFile(prose, []byte("dear diary\n"), 0o644))
	formats := strings.Join(foreignlog.FormatNames(), ", ")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"logs"}, "requires at least 1 arg"},
		{[]string{"logs", empty}, empty + ": empty file"},
		{[]string{"logs", prose}, prose + ": not in any known format (tried " + formats},
		{[]string{"logs", "--format", "course", prose}, prose + ": no line is in format course (tried course)"},
		{[]string{"logs", "--format", "nope", prose}, `--format "nope": want one of ` + formats},
		{[]string{"logs", filepath.Join(dir, "missing")}, "no such file or directory"},
	}
	for _, c := range cases {
		code, _, stderr := execute(t, c.args...)
		assert.Equal(t, exitUsage, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
		assert.NotContains(t, stderr, "\n", "one line")
	}
}

// Seed 002's etcd nodes replay their configuration changes from the WAL:
// the membership reaches voters (1 2 3) on every node before the first
// election, in the text (summary and timeline) and in the JSON.
func TestLogsSeed002Membership(t *testing.T) {
	seed := seedLog(t, "002")
	code, out, stderr := execute(t, "logs", seed)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "Membership over time: 4 configurations")
	assert.Contains(t, out, "#4   +0.000s voters=(1 2 3); switched to by 1 2 3")
	assert.Contains(t, out, "| MEMBERS")
	assert.Contains(t, out, "| #4 voters=(1 2 3)\n")

	code, out, _ = execute(t, "logs", "--json", seed)
	require.Equal(t, exitOK, code)
	var reports []foreignlog.Report
	require.NoError(t, json.Unmarshal([]byte(out), &reports))
	require.Len(t, reports, 1)
	ms := reports[0].Facts.Membership
	require.NotEmpty(t, ms)
	last := ms[len(ms)-1]
	assert.Equal(t, []string{"1", "2", "3"}, last.Voters)
	assert.Equal(t, []string{"1", "2", "3"}, last.Nodes, "every node reached it")
}

// chaos-node's conf events: three voters add n4 as a learner and promote
// it; n4 joins with an empty log and applies both changes. The summary
// lists the configurations by index, the timeline shows who switched when.
func TestLogsChaosMembership(t *testing.T) {
	dir := t.TempDir()
	write := func(node string, lines ...string) string { return writeEventLog(t, dir, node, lines...) }
	line := func(sec, node, rest string) string {
		return `{"time":"2026-01-02T10:00:0` + sec + `Z","event":` + rest + `,"node":"` + node + `"}`
	}
	conf := func(sec, node, index, change, voters, learners string) string {
		return line(sec, node, `"conf","index":`+index+`,"term":1,"change":"`+change+`","voters":"`+voters+`","learners":"`+learners+`"`)
	}
	var paths []string
	for _, n := range []string{"n1", "n2", "n3"} {
		paths = append(paths, write(n, line("0", n, `"start","term":0,"entries":0,"bugs":""`),
			conf("0", n, "0", "", "n1,n2,n3", ""),
			conf("2", n, "3", "add-learner n4", "n1,n2,n3", "n4"),
			conf("4", n, "5", "promote-voter n4", "n1,n2,n3,n4", "")))
	}
	paths = append(paths, write("n4", line("3", "n4", `"start","term":0,"entries":0,"bugs":""`),
		conf("3", "n4", "3", "add-learner n4", "n1,n2,n3", "n4"),
		conf("5", "n4", "5", "promote-voter n4", "n1,n2,n3,n4", "")))

	code, out, stderr := execute(t, append([]string{"logs"}, paths...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "conf lines are in the format")
	assert.Contains(t, out, "Membership over time: 3 configurations")
	assert.Contains(t, out, "#2   +2.000s voters=(n1 n2 n3) learners=(n4) (add-learner n4 at index 3); switched to by n1 n2 n3 n4")
	assert.Contains(t, out, "#3   +4.000s voters=(n1 n2 n3 n4) (promote-voter n4 at index 5); switched to by n1 n2 n3 n4")
	assert.Contains(t, out, "| conf #3        | conf #3        | conf #3        |                | #3 voters=(n1 n2 n3 n4), promote-voter n4 at index 5")

	code, out, _ = execute(t, "logs", "--json", paths[0], paths[3])
	require.Equal(t, exitOK, code)
	var reports []foreignlog.Report
	require.NoError(t, json.Unmarshal([]byte(out), &reports))
	require.Len(t, reports, 1)
	ms := reports[0].Facts.Membership
	require.Len(t, ms, 3)
	assert.Equal(t, foreignlog.Membership{At: 4e9, Index: 5, Change: "promote-voter n4", Voters: []string{"n1", "n2", "n3", "n4"},
		Nodes: []string{"n1", "n4"}, Line: 4}, ms[2])

	code, out, _ = execute(t, append([]string{"logs", "--html", "-"}, paths...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "<th>members</th>")
	assert.Contains(t, out, "<td>#2 voters=(n1 n2 n3) learners=(n4), add-learner n4 at index 3</td>")
}

// writeEventLog writes lines as dir/<node>.jsonl and returns its path.
func writeEventLog(t *testing.T, dir, node string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, node+".jsonl")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return p
}
