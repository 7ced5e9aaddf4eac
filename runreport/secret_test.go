package runreport

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"chaos/testrun/runrecord"
)

// The command on report.html never shows the password, even when the Run
// was handed a test record whose argv was not redacted.
func TestReportCommandIsRedacted(t *testing.T) {
	const pw = "hunter2-in-report"
	r := smallRun(runrecord.Results{RunSummary: runrecord.RunSummary{Name: "t"}})
	r.Test = &runrecord.TestRecord{Argv: []string{"chaos", "run", "--password", pw, "--password=" + pw, "--password-file", "/etc/pw"}}
	page := render(t, r)
	assert.NotContains(t, page, pw)
	assert.Contains(t, page, "chaos run --password &lt;redacted&gt; --password=&lt;redacted&gt; --password-file /etc/pw")
}
