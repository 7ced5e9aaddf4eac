package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/campaign"
)

// Bad campaign files and flags exit 254 with one line naming the file,
// the line and the fix, before anything runs (nothing is written to the
// store).
func TestTestAllRefusesBadCampaigns(t *testing.T) {
	cases := []struct {
		name, file string
		args       []string
		want       string
	}{
		{"does not parse", "tests:\n  - name: a\n    nemesis: [partition\n", nil, "c.yaml:2: does not parse as YAML"},
		{"unknown option", "tests:\n  - name: a\n    nemesiss: partition\n", nil, `:3: unknown option "nemesiss"`},
		{"bad value", "tests:\n  - name: a\n    time-limit: soon\n", nil, `:3: option time-limit "soon"`},
		{"value chaos run refuses", "defaults:\n  time-limit: 5s\ntests:\n  - name: a\n  - name: b\n    workload: sets\n", nil,
			`:5: test "b": --workload "sets": want register or set`},
		{"unknown fault family", "tests:\n  - name: a\n    nemesis: [partition, flood]\n", nil, `:2: test "a": --nemesis "flood"`},
		{"no name", "tests:\n  - nemesis: partition\n", nil, ":2: a test without a name"},
		{"two tests, one name", "tests:\n  - name: a\n  - name: a\n", nil, `:3: a second test named "a"`},
		{"empty list", "tests: []\n", nil, ":1: tests: the list is empty"},
		{"reserved option", "tests:\n  - name: a\n    test-count: 3\n", nil, ":3: option test-count cannot be set"},
		{"bad expect", "tests:\n  - name: a\n    expect: maybe\n", nil, `:3: expect "maybe"`},
		{"bad shard", "tests:\n  - name: a\n", []string{"--shard", "3/2"}, `--shard "3/2"`},
		{"unknown test", "tests:\n  - name: a\n", []string{"--only", "b"}, `--only "b": no such test`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o644))
			store := filepath.Join(dir, "store")
			args := append([]string{"test-all", "--campaign", path, "--store", store}, tc.args...)
			code, _, errOut := execute(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, errOut, tc.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errOut), "\n")+1, "one line: %q", errOut)
			assert.NoDirExists(t, store, "nothing runs before every test is checked")
		})
	}
	code, _, errOut := execute(t, "test-all")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--campaign is required")
}

// A campaign option goes through chaos run's own flag: a list becomes
// repeated values of a repeatable flag, or one comma list.
func TestSetOptionUsesRunFlags(t *testing.T) {
	ro := &runOptions{}
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	ro.register(f)
	require.NoError(t, setOption(f, campaign.Option{Name: "bug", Values: []string{"stale-read", "lease-read"}}))
	require.NoError(t, setOption(f, campaign.Option{Name: "nemesis", Values: []string{"partition", "kill"}}))
	require.NoError(t, setOption(f, campaign.Option{Name: "time-limit", Values: []string{"7s"}}))
	assert.Equal(t, []string{"stale-read", "lease-read"}, ro.o.Bugs)
	assert.Equal(t, "partition,kill", ro.nemesis)
	assert.Equal(t, "7s", ro.o.TimeLimit.String())
	assert.Equal(t, "chaos run --bug stale-read --bug lease-read --nemesis partition,kill --time-limit 7s --seed 9",
		replayCommand(f, 9))
}

// The shipped campaigns parse, and chaos run accepts every test's options.
func TestShippedCampaignsAreValid(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "campaigns", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		file, err := campaign.ReadFile(path)
		require.NoError(t, err)
		to := &testAllOptions{store: t.TempDir()}
		for _, test := range file.Tests {
			_, err := to.plan(pflag.NewFlagSet("test-all", pflag.ContinueOnError), io.Discard, path, test)
			assert.NoError(t, err, "%s: %s", path, test.Name)
		}
	}
}
