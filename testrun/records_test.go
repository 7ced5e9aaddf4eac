package testrun

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/control"
	"chaos/nemesis"
	"chaos/testrun/runrecord"
)

// test.json and results.json are written and read back through the same
// types, with the field names docs/FORMATS.md gives.
func TestRecordsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rd := &runDir{dir: dir}
	rec := runrecord.TestRecord{Name: "t", Seed: 7, Argv: []string{"chaos", "run"}, DB: "chaos-node", Workload: "register",
		Keys: 10, Concurrency: "2n", TimeLimitS: 60, Nemesis: []string{"kill"}, RecoveryS: 5, Local: true}
	require.NoError(t, rd.writeJSON("test.json", rec))
	got, err := runrecord.ReadTestRecord(dir)
	require.NoError(t, err)
	assert.Equal(t, rec, got)
	assert.Equal(t, 5*time.Second, got.Recovery())
	raw, err := os.ReadFile(filepath.Join(dir, "test.json"))
	require.NoError(t, err)
	for _, field := range []string{`"time_limit_s": 60`, `"recovery_s": 5`, `"local": true`, `"seed": 7`} {
		assert.Contains(t, string(raw), field)
	}

	sum := runrecord.RunSummary{Name: "t", Seed: 7, DurationS: 1.5, Nemesis: runrecord.NemesisSummary{
		Transitions: []runrecord.Transition{{TimeS: 1, F: "kill", Value: []byte(`{"nodes":["n1"]}`)}}, Unavailable: map[string]string{}}}
	require.NoError(t, rd.writeJSON("results.json", sum))
	valid, err := checker.WriteResults(filepath.Join(dir, "results.json"), checker.Report{
		Ops: checker.Counts{Invoke: 2, OK: 1, Info: 1}, Checks: map[string]checker.Result{"stats": {Valid: checker.Unknown}}})
	require.NoError(t, err)
	res, err := runrecord.ReadResults(dir)
	require.NoError(t, err)
	assert.Equal(t, valid, res.Valid)
	assert.Equal(t, checker.Unknown, res.Valid)
	require.Len(t, res.Nemesis.Transitions, 1)
	assert.JSONEq(t, `{"nodes":["n1"]}`, string(res.Nemesis.Transitions[0].Value))
	res.Nemesis.Transitions[0].Value = sum.Nemesis.Transitions[0].Value
	assert.Equal(t, sum, res.RunSummary)
	assert.Equal(t, 2, res.Ops.Invoke)
	assert.Contains(t, res.Checks, "stats")
}

func TestReadRecordsOfNoRun(t *testing.T) {
	_, err := runrecord.ReadTestRecord(t.TempDir())
	assert.ErrorIs(t, err, os.ErrNotExist)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte("{"), 0o644))
	_, err = runrecord.ReadResults(dir)
	assert.ErrorContains(t, err, "results.json")
}

// test.json keeps how the hosts were reached, for chaos heal: files as
// absolute paths, and never the password.
func TestTestRecordKeepsSSHWithoutSecrets(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	rec := sshRecord(control.SSHConfig{User: "ops", Port: 2222, KeyFiles: []string{"tb/id_ed25519"}, KnownHosts: "/etc/kh",
		Password: "hunter2", Agent: true, InsecureIgnoreHostKey: true})
	assert.Equal(t, &runrecord.SSHRecord{User: "ops", Port: 2222, PrivateKeys: []string{filepath.Join(wd, "tb/id_ed25519")},
		KnownHosts: "/etc/kh"}, rec)

	dir := t.TempDir()
	rd := &runDir{dir: dir}
	require.NoError(t, rd.writeJSON("test.json", runrecord.TestRecord{Name: "t", Nodes: []string{"h1"}, SSH: rec}))
	raw, err := os.ReadFile(filepath.Join(dir, "test.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "hunter2")
	assert.Contains(t, string(raw), `"strict_host_key_checking": false`)
	got, err := runrecord.ReadTestRecord(dir)
	require.NoError(t, err)
	assert.Equal(t, rec, got.SSH)
}

// A run made by another schedule version says so where its seed is shown;
// one made by this version, nothing.
func TestReplayNoteNamesAnotherScheduleVersion(t *testing.T) {
	assert.Empty(t, runrecord.TestRecord{Seed: 5, ScheduleVersion: nemesis.ScheduleVersion}.ReplayNote())
	old := runrecord.TestRecord{Seed: 5, Version: "v0.3.0"}.ReplayNote() // before schedule_version was recorded
	assert.Equal(t, "This run was made by nemesis schedule version 1 (chaos v0.3.0); this chaos's schedule is version 3, "+
		"so --seed 5 starts other faults here: replay it with the chaos that made it.", old)
}
