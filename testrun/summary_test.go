package testrun

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"chaos/checker"
	"chaos/history/faultrec"
)

// The run's summary says what became of the faults, beside the ops, when
// a schedule ran; a run without faults says nothing of them.
func TestSummaryCountsTheFaults(t *testing.T) {
	var out bytes.Buffer
	r := &run{env: Env{Out: &out}, rd: &runDir{dir: "/store/x/1"}}
	r.summarize(Result{Valid: checker.Valid, Report: checker.Report{Checks: map[string]checker.Result{}},
		Faults: faultrec.Tally{Started: 11, Refused: 1, CutShort: 1, ProbeMisses: 3}})
	assert.Contains(t, out.String(), "faults: 11 started, 1 refused, 0 failed, 1 cut short, 3 probe misses\n")

	out.Reset()
	r.summarize(Result{Valid: checker.Valid, Report: checker.Report{Checks: map[string]checker.Result{}}})
	assert.False(t, strings.Contains(out.String(), "faults:"), out.String())
}
