package runreport

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/history"
	"chaos/testrun/runrecord"
)

// render renders r and returns the page.
func render(t *testing.T, r Run) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Render(&b, r))
	return b.String()
}

// smallRun is a run of one ok write, with results as given.
func smallRun(res runrecord.Results) Run {
	h := history.History{
		{Index: 0, Time: 1e6, Process: 0, Type: history.Invoke, F: history.FWrite, Key: "k1"},
		{Index: 1, Time: 3e6, Process: 0, Type: history.OK, F: history.FWrite, Key: "k1"},
	}
	return Run{Dir: "/store/t/x", Results: res}.WithHistory(h)
}

// report.html shows the leader changes the controller polled, or says
// the system cannot say. (This test moved here from campaign with the
// report; each row now gives its unit.)
func TestReportShowsLeaders(t *testing.T) {
	page := render(t, smallRun(runrecord.Results{RunSummary: runrecord.RunSummary{Name: "t",
		Leaders: []runrecord.LeaderChange{{TimeS: 0.5, Leader: "n2"}, {TimeS: 12.25, Leader: "none"}}}}))
	assert.Contains(t, page, "<tr><td>0.5 s</td><td>n2</td></tr><tr><td>12.2 s</td><td>none</td></tr>")

	page = render(t, smallRun(runrecord.Results{RunSummary: runrecord.RunSummary{Name: "t"}}))
	assert.Contains(t, page, "does not say who leads")
}

// The verdict and each check are at the top, the anomalies in words, with
// a link to Porcupine's visualization of the failing key, and every file
// of the run is linked.
func TestReportShowsChecksAndAnomalies(t *testing.T) {
	lin, err := json.Marshal(checker.Result{Valid: checker.Invalid, Details: &checker.LinearizableDetails{Partitions: 1,
		InvalidKeys: []string{"k3"}, Failures: []checker.KeyFailure{{Key: "k3",
			Explanation:   "key k3: process 2 read 7 at 0.140–0.150 s, but 7 was overwritten by 9",
			Visualization: "linearizable/key-k3.html"}}}})
	require.NoError(t, err)
	r := smallRun(runrecord.Results{RunSummary: runrecord.RunSummary{Name: "stale", Seed: 3}, Valid: checker.Invalid,
		Checks: map[string]json.RawMessage{"linearizable": lin, "stats": json.RawMessage(`{"valid":true}`)}})
	r.Files = []File{{Path: "history.jsonl", Size: 10}, {Path: "linearizable/key-k3.html", Size: 2048}}
	page := render(t, r)
	assert.Contains(t, page, `<span id="verdict" class="verdict invalid">false</span>`)
	assert.Contains(t, page, `<td>linearizable</td><td><span class="invalid">false</span></td>`)
	assert.Contains(t, page, `key k3: process 2 read 7 at 0.140–0.150 s, but 7 was overwritten by 9 `+
		`(see <a href="linearizable/key-k3.html">linearizable/key-k3.html</a>)<br>`)
	assert.Contains(t, page, `<a href="history.jsonl">history.jsonl</a> <span class="note">10 B</span>`)
	assert.Contains(t, page, `<a href="linearizable/key-k3.html">linearizable/key-k3.html</a> <span class="note">2.0 KB</span>`)
	assert.Contains(t, page, "No faults were injected.")
}

// A check whose details or verdict do not decode (a field renamed, a type
// changed) says so in the checks table, with why: never a check whose
// findings are silently blank.
func TestReportShowsUndecodableChecks(t *testing.T) {
	r := smallRun(runrecord.Results{RunSummary: runrecord.RunSummary{Name: "t"}, Valid: checker.Invalid,
		Checks: map[string]json.RawMessage{
			"availability": json.RawMessage(`{"valid":false,"leaderless":"many"}`),
			"raft":         json.RawMessage(`{"valid":"perhaps","events":"lots"}`),
		}})
	page := render(t, r)
	assert.Contains(t, page, "the availability check&#39;s details do not decode: json: cannot unmarshal string")
	assert.Contains(t, page, "the raft check&#39;s verdict does not decode: ")
	assert.Contains(t, page, "the raft check&#39;s details do not decode: ")
}
