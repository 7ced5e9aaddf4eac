package storeweb_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/campaign"
	"chaos/checker"
	"chaos/testrun/runrecord"
)

// fixture is a small store built file by file with the owners' types, and
// a directory outside it that symlinks in the store lead to.
type fixture struct {
	store, outside string
}

// Runs of the fixture, oldest first; names and times are their
// directories.
const (
	validTime   = "20260101T000000.000Z"
	invalidTime = "20260102T000000.000Z"
	unknownTime = "20260103T000000.000Z"
	missingTime = "20260104T000000.000Z" // no results.json
	corruptTime = "20260105T000000.000Z" // results.json is not JSON
	leakTime    = "20260106T000000.000Z" // results.json is a symlink out of the store
	secret      = "the secret outside the store"
)

func newFixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{store: filepath.Join(t.TempDir(), "store"), outside: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte(secret), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.outside, "results.json"), []byte(`{"valid":true,"name":"`+secret+`"}`), 0o644))

	f.run(t, "register-kill", validTime, checker.Valid, "kill", "start")
	f.run(t, "register-partition-bug", invalidTime, checker.Invalid, "start-partition", "stop-partition", "start-partition")
	f.run(t, "set-pause", unknownTime, checker.Unknown, "pause", "resume")
	f.write(t, "register-kill/"+missingTime+"/test.json", `{"name":"register-kill"}`)
	f.write(t, "register-kill/"+corruptTime+"/results.json", `{"valid": tru`)
	f.write(t, "register-kill/"+leakTime+"/test.json", `{}`)
	f.symlink(t, filepath.Join(f.outside, "results.json"), "register-kill/"+leakTime+"/results.json")

	// Symlinks leaving the store: a file, a directory, a whole run.
	f.symlink(t, filepath.Join(f.outside, "secret.txt"), "register-kill/"+validTime+"/escape.txt")
	f.symlink(t, f.outside, "register-kill/"+validTime+"/nodes/away")
	f.symlink(t, f.outside, "register-kill/20260107T000000.000Z")
	// The latest links chaos run makes, which stay in the store.
	f.symlink(t, filepath.Join("register-kill", leakTime), "latest")
	f.symlink(t, validTime, "register-kill/latest")
	f.campaign(t)
	return f
}

// run writes a run directory as chaos run does: test.json, results.json
// with the given verdict and nemesis transitions, history.jsonl,
// report.html and a node's files.
func (f fixture) run(t *testing.T, name, stamp string, v checker.Validity, faults ...string) {
	t.Helper()
	started, err := time.Parse("20060102T150405.000Z", stamp)
	require.NoError(t, err)
	dir := name + "/" + stamp + "/"
	f.writeJSON(t, dir+"test.json", runrecord.TestRecord{Name: name, Seed: 7, Started: started.Format(time.RFC3339Nano),
		Argv: []string{"chaos", "run", "--name", name}, Workload: "register"})
	res := runrecord.Results{Valid: v, Ops: checker.Counts{Invoke: 10, OK: 7, Fail: 2, Info: 1},
		RunSummary: runrecord.RunSummary{Name: name, Seed: 7, Started: started.Format(time.RFC3339Nano), DurationS: 12.5}}
	for i, fault := range faults {
		res.Nemesis.Transitions = append(res.Nemesis.Transitions, runrecord.Transition{TimeS: float64(i), F: fault})
	}
	f.writeJSON(t, dir+"results.json", res)
	f.write(t, dir+"history.jsonl", `{"index":0,"time":1,"process":0,"type":"invoke","f":"read","key":"k1"}`+"\n")
	f.write(t, dir+"report.html", "<!DOCTYPE html><title>report of "+name+"</title><a href=\"history.jsonl\">history</a>\n")
	f.write(t, dir+"nodes/n1/events.jsonl", `{"time":"2026-01-01T00:00:00Z","node":"n1","event":"start"}`+"\n")
	f.write(t, dir+"linearizable/key-k 1.html", "<p>key k 1</p>\n")
}

// campaign writes a campaign of two tests whose runs are the valid and the
// invalid run, with package campaign's own writer.
func (f fixture) campaign(t *testing.T) {
	t.Helper()
	runDir := func(name, stamp string) string { return filepath.Join("elsewhere", "store", name, stamp) }
	rec := campaign.Record{Campaign: "smoke", File: "campaigns/smoke.yaml", Started: "2026-01-08T00:00:00Z", DurationS: 60, Shard: "1/1",
		Exit: 1, Tests: []campaign.TestResult{
			{Name: "kill", Expect: campaign.ExpectValid, Count: 1, Outcome: campaign.Pass,
				Runs: []campaign.Run{{Seed: 7, Verdict: campaign.Valid, Dir: runDir("register-kill", validTime), OpsPerS: 500}}},
			{Name: "partition", Expect: campaign.ExpectValid, Count: 2, Outcome: campaign.Fail,
				Runs: []campaign.Run{{Seed: 8, Verdict: campaign.Invalid, Dir: runDir("register-partition-bug", invalidTime)},
					{Seed: 9, Verdict: campaign.Crashed, Summary: "hosts unreachable"}}},
		}}
	for i := range rec.Tests {
		rec.Tests[i].Stats = campaign.Summarize(rec.Tests[i].Runs)
	}
	dir, err := campaign.NewDir(f.store, "smoke", time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.NoError(t, rec.Write(dir))
	f.write(t, "campaigns/smoke/20260109T000000.000Z/campaign.json", "[]")
}

func (f fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(f.store, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func (f fixture) writeJSON(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	f.write(t, rel, string(b))
}

func (f fixture) symlink(t *testing.T, target, rel string) {
	t.Helper()
	p := filepath.Join(f.store, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.Symlink(target, p))
}
