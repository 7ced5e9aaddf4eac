package testrun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/testrun/runrecord"
)

// test.json never holds the password: its writer redacts argv, and its
// reader redacts a test.json written before the writer did.
func TestTestJSONArgvIsRedacted(t *testing.T) {
	const pw = "hunter2-in-test-json"
	dir := t.TempDir()
	argv := []string{"chaos", "run", "--password", pw, "--password=" + pw, "--password-file", "/etc/pw"}
	r := &run{o: Options{Argv: argv}, rd: &runDir{dir: dir}}
	require.NoError(t, r.writeTestJSON())
	raw, err := os.ReadFile(filepath.Join(dir, "test.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), pw)
	assert.Contains(t, string(raw), `"--password-file",`, "the password file's path is not secret")
	assert.Equal(t, pw, r.o.Argv[3], "the options' argv was changed")

	old := `{"name":"t","argv":["chaos","run","--password","` + pw + `","--password=` + pw + `"]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test.json"), []byte(old), 0o644))
	got, err := runrecord.ReadTestRecord(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"chaos", "run", "--password", "<redacted>", "--password=<redacted>"}, got.Argv)
}
