package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A description that is wrong is refused before any host is touched: one
// line with the file, the line, and the fix; exit 254; nothing in the
// store.
func TestRunRefusesBadDescriptions(t *testing.T) {
	good, err := os.ReadFile("../../examples/systems/chaos-node.yaml")
	require.NoError(t, err)
	text := string(good)
	cases := []struct {
		name, text, want string
		line             int
	}{
		{"does not parse", strings.Replace(text, "ports: {client: 7000, peer: 7001}", "ports: {client: 7000, peer: 7001", 1),
			"not valid YAML: did not find expected ',' or '}'; fix the syntax", 10},
		{"unknown key", strings.Replace(text, "events:", "event:", 1),
			`unknown key "event" at the top level; the keys there are binary, client, clock, events, leader, logs,`, 25},
		{"missing required field", strings.Replace(text, "up: {http: /status}", "", 1),
			"no up; add up: {http: /path} (a GET that answers 200), {tcp: client} or {command: ...} to tell that a node answers", 1},
		{"unknown template variable", strings.Replace(text, "--data-dir {data_dir}", "--data-dir {data}", 1),
			"unknown variable {data} in start; the variables there are addr, bin_dir, bug_flags, client_addr, client_port, data_dir, id, log_dir, members, peer_addr, peer_port: fix the name, or leave the braces out", 17},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "mydb.yaml")
			require.NoError(t, os.WriteFile(file, []byte(c.text), 0o644))
			store := filepath.Join(dir, "store")
			code, out, errOut := execute(t, "run", "--db", file, "--store", store)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.NotContains(t, strings.TrimSpace(errOut), "\n", "one line")
			assert.Contains(t, errOut, file+":"+itoaForTest(c.line)+": "+c.want)
			_, err := os.Stat(store)
			assert.True(t, os.IsNotExist(err), "the store was written")

			code, _, errOut = execute(t, "heal", "--db", file)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, errOut, file+":"+itoaForTest(c.line)+": ")
		})
	}
}

func itoaForTest(i int) string {
	var b []byte
	for ; i > 0 || len(b) == 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// What a good description cannot do is refused too: --bug on a system
// whose start does not pass bugs on, a workload its HTTP templates lack.
func TestRunRefusesWhatADescriptionCannotDo(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	code, _, errOut := execute(t, "run", "--db", "../../examples/systems/etcd.yaml", "--bug", "stale-read", "--store", store)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "etcd.yaml:15: --bug plants bugs through {bug_flags}, which start does not use")

	dir := t.TempDir()
	good, err := os.ReadFile("../../examples/systems/etcd.yaml")
	require.NoError(t, err)
	text := string(good)
	text = text[:strings.Index(text, "    # The set workload")]
	file := filepath.Join(dir, "etcd.yaml")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	code, _, errOut = execute(t, "run", "--db", file, "--workload", "set", "--store", store)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, file+":54: client.http has no add, which the set workload needs; add add, set_read")

	code, _, errOut = execute(t, "run", "--db", filepath.Join(dir, "missing.yaml"), "--store", store)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "missing.yaml: cannot read the description (no such file or directory)")
	_, err = os.Stat(store)
	assert.True(t, os.IsNotExist(err), "the store was written")
}
