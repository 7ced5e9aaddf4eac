package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"chaos/campaign"
)

// tinyCampaign stands in for the examples' campaigns/smoke.yaml: three
// tests, one short run each, so that every shard of three runs one.
const tinyCampaign = "defaults:\n  time-limit: 2s\n  nemesis: none\n  recovery: 1s\ntests:\n" +
	"  - name: a\n    seed: 1\n  - name: b\n    seed: 2\n  - name: c\n    seed: 3\n"

// shellWith runs line with sh in dir, chaos being the binary under test,
// and fails the test unless it exits 0.
func shellWith(t *testing.T, dir, line string, env ...string) {
	t.Helper()
	bin, err := chaosBinary()
	require.NoError(t, err)
	cmd := exec.Command("sh", "-c", "chaos() { "+bin+` "$@"; }; `+line)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		err = <-done
	}
	require.NoError(t, err, "%s\n%s", line, out.String())
}

// mergedTests are the tests of the newest merged campaign in store.
func mergedTests(t *testing.T, store string) []string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(filepath.Join(store, "campaigns", "smoke", "latest"))
	require.NoError(t, err)
	rec, err := campaign.ReadRecord(dir)
	require.NoError(t, err)
	require.Len(t, rec.MergedFrom, 3)
	var names []string
	for _, tr := range rec.Tests {
		names = append(names, tr.Name)
	}
	return names
}

// The GitHub Actions example parses, has a matrix of three shards and a
// merge job, and its commands, run here in local mode with the matrix
// values and the artifacts' layout, give the merged campaign.
func TestCIExampleGitHubActions(t *testing.T) {
	skipE2E(t)
	var wf struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Strategy struct {
				Matrix map[string][]int `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	b, err := os.ReadFile("../../examples/ci/github-actions.yml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &wf))
	step := func(job, name string) string {
		for _, s := range wf.Jobs[job].Steps {
			if s.Name == name {
				run := strings.ReplaceAll(s.Run, `sudo -E env "PATH=$PATH" go run ./cmd/chaos`, "chaos")
				return strings.ReplaceAll(run, "go run ./cmd/chaos", "chaos")
			}
		}
		t.Fatalf("job %s has no step %q", job, name)
		return ""
	}
	shards := wf.Jobs["shard"].Strategy.Matrix["shard"]
	require.Equal(t, []int{1, 2, 3}, shards)
	require.Equal(t, "3", wf.Env["SHARDS"])

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "campaigns"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "campaigns", "smoke.yaml"), []byte(tinyCampaign), 0o644))
	env := []string{"CAMPAIGN=" + wf.Env["CAMPAIGN"], "SHARDS=" + wf.Env["SHARDS"]}
	for _, shard := range []string{"1", "2", "3"} {
		shellWith(t, dir, strings.ReplaceAll(step("shard", "run the shard"), "${{ matrix.shard }}", shard), env...)
		// upload-artifact of shard-N/campaigns, download-artifact into shards/shard-N
		shellWith(t, dir, "mkdir -p shards/shard-"+shard+" && cp -RL shard-"+shard+"/campaigns/. shards/shard-"+shard)
	}
	shellWith(t, dir, step("merge", "merge the shards"), env...)
	assert.Equal(t, []string{"a", "b", "c"}, mergedTests(t, filepath.Join(dir, "merged")))
}

// The Kubernetes example parses as an Indexed Job of three pods and a
// merge Job, and its commands, run here with the index each pod gets and
// a directory for the shared volume, give the merged campaign.
func TestCIExampleIndexedJob(t *testing.T) {
	skipE2E(t)
	type job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	b, err := os.ReadFile("../../examples/ci/k8s-indexed-job.yaml")
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var shardJob, mergeJob job
	require.NoError(t, dec.Decode(&shardJob))
	require.NoError(t, dec.Decode(&mergeJob))
	require.Equal(t, "Indexed", shardJob.Spec.CompletionMode)
	require.Equal(t, 3, shardJob.Spec.Completions)
	require.Equal(t, 3, shardJob.Spec.Parallelism)

	dir := t.TempDir()
	for _, d := range []string{"campaigns", "results"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "campaigns", "smoke.yaml"), []byte(tinyCampaign), 0o644))
	local := func(line string) string { // the pods' mounts, under dir
		return strings.NewReplacer(" /campaigns/", " "+dir+"/campaigns/", " /results", " "+dir+"/results",
			`"/results`, `"`+dir+"/results").Replace(line)
	}
	shard := shardJob.Spec.Template.Spec.Containers[0].Args[0]
	require.Contains(t, shard, "--shard auto/3")
	for _, index := range []string{"0", "1", "2"} {
		shellWith(t, dir, local(shard), campaign.IndexEnv+"="+index)
	}
	shellWith(t, dir, local(mergeJob.Spec.Template.Spec.Containers[0].Args[0]))
	assert.Equal(t, []string{"a", "b", "c"}, mergedTests(t, filepath.Join(dir, "results", "merged")))
}
