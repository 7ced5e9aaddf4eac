package campaign

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// campaign.json and junit.xml never hold the password a replay command
// carried, and ReadRecord redacts a campaign.json written before Write did.
func TestRecordRedactsReplayCommands(t *testing.T) {
	const pw = "hunter2-in-campaign"
	replay := "chaos run --password '" + pw + "' --seed 8"
	rec := Record{Campaign: "smoke", Shard: "1/1", Exit: 1, Tests: []TestResult{{Name: "a", Expect: ExpectValid,
		Outcome: Fail, Replay: replay, Runs: []Run{{Seed: 8, Verdict: Invalid, Replay: replay}}}}}
	rec.Tests[0].Stats = Summarize(rec.Tests[0].Runs)
	dir := t.TempDir()
	require.NoError(t, rec.Write(dir))
	for _, f := range []string{RecordFile, JUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.NotContains(t, string(b), pw, f)
		assert.Contains(t, string(b), "--seed 8", f)
	}
	assert.Equal(t, replay, rec.Tests[0].Runs[0].Replay, "Write changed its record")

	old := `{"campaign":"smoke","tests":[{"name":"a","replay":"chaos run --password=` + pw + `","runs":[{"replay":"chaos run --password ` + pw + `"}]}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte(old), 0o644))
	got, err := ReadRecord(dir)
	require.NoError(t, err)
	assert.Equal(t, "chaos run '--password=<redacted>'", got.Tests[0].Replay)
	assert.Equal(t, "chaos run --password '<redacted>'", got.Tests[0].Runs[0].Replay)
}
