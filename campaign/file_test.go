package campaign

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const good = `# a campaign
defaults:
  time-limit: 20s
  nemesis: [kill, pause]
tests:
  - name: kill
    nemesis: kill
  - name: stale-read
    bug: [stale-read]
    --nemesis: partition
    expect: invalid
    count: 3
`

func TestParseCampaignFile(t *testing.T) {
	f, err := Parse("c.yaml", []byte(good))
	require.NoError(t, err)
	require.Len(t, f.Tests, 2)
	kill := f.Tests[0]
	assert.Equal(t, Test{Name: "kill", Expect: ExpectValid, Count: 1, Line: 6, Options: []Option{
		{Name: "time-limit", Values: []string{"20s"}, Line: 3},
		{Name: "nemesis", Values: []string{"kill", "pause"}, Line: 4},
		{Name: "nemesis", Values: []string{"kill"}, Line: 7},
	}}, kill)
	bug := f.Tests[1]
	assert.Equal(t, ExpectInvalid, bug.Expect)
	assert.Equal(t, 3, bug.Count)
	assert.Equal(t, Option{Name: "bug", Values: []string{"stale-read"}, Line: 9}, bug.Options[2])
	assert.Equal(t, Option{Name: "nemesis", Values: []string{"partition"}, Line: 10}, bug.Options[3], "a leading -- is allowed")
}

// Each bad file is one line naming the file, the line and the fix.
func TestParseBadCampaignFiles(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"syntax", "tests: a\n  c: d\n", "c.yaml:2: does not parse as YAML: mapping values are not allowed in this context; fix the syntax"},
		{"empty", "", "c.yaml: is empty; list tests under tests:, each with a name"},
		{"no tests", "defaults:\n  keys: 3\n", "c.yaml:1: no tests:; list the tests under tests:, each with a name"},
		{"empty list", "tests: []\n", "c.yaml:1: tests: the list is empty; add at least one test with a name"},
		{"not a list", "tests: {a: 1}\n", "c.yaml:1: tests: want a list of tests, each with a name"},
		{"unknown top key", "test:\n  - name: a\n", `c.yaml:1: unknown key "test"; a campaign file has defaults: and tests:`},
		{"no name", "tests:\n  - nemesis: kill\n", "c.yaml:2: a test without a name; add name: to it"},
		{"two names", "tests:\n  - name: a\n  - name: b\n  - name: a\n", `c.yaml:4: a second test named "a" (the first is on line 2); give each test its own name`},
		{"bad expect", "tests:\n  - name: a\n    expect: maybe\n", `c.yaml:3: expect "maybe": want valid or invalid`},
		{"bad count", "tests:\n  - name: a\n    count: 0\n", `c.yaml:3: count "0": want a whole number of runs, at least 1`},
		{"reserved", "tests:\n  - name: a\n    store: /x\n", "c.yaml:3: option store cannot be set in a campaign file: the store is test-all's --store"},
		{"nested", "tests:\n  - name: a\n    nemesis: {a: b}\n", "c.yaml:3: option nemesis: want a value or a list of values"},
		{"name in defaults", "defaults:\n  name: x\ntests:\n  - name: a\n", "c.yaml:2: defaults: name belongs to each test, not to the defaults"},
	}
	for _, c := range cases {
		_, err := Parse("c.yaml", []byte(c.text))
		require.Error(t, err, c.name)
		var fe *Error
		require.ErrorAs(t, err, &fe, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		assert.NotContains(t, err.Error(), "\n", c.name)
	}
}

func TestReadFileMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.yaml")
	_, err := ReadFile(path)
	assert.EqualError(t, err, path+": cannot be read: no such file or directory")
	require.NoError(t, os.WriteFile(path, []byte(good), 0o644))
	f, err := ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, f.Tests, 2)
}
