package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sparseFile makes a 2 GiB file of zeros that takes no disk.
func sparseFile(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Truncate(p, 2<<30))
	return p
}

// bounded runs the command line and fails unless it ended within a second
// having allocated well under the input's gigabytes: it refused the input
// rather than read it.
func bounded(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	code, stdout, stderr = execute(t, args...)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	assert.Less(t, took, time.Second, "%v took %v", args, took)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(128<<20), "%v allocated %d bytes", args, after.TotalAlloc-before.TotalAlloc)
	return code, stdout, stderr
}

func requireOneLine(t *testing.T, s string) {
	t.Helper()
	assert.Equal(t, 0, strings.Count(strings.TrimSpace(s), "\n"), "one line: %q", s)
}

// chaos logs refuses, in one line and at once, what is not a log file:
// /dev/zero, an events.jsonl that is a link to it, and a 2 GiB file.
func TestLogsRefusesEndlessAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "nodes", "n1", "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.Symlink("/dev/zero", link))
	sparse := sparseFile(t, dir, "raft.log")
	cases := map[string]string{
		"/dev/zero": "read /dev/zero: it is a character device, not a regular file: give a file",
		link:        "read " + link + ": it is a character device, not a regular file: give a file",
		sparse:      "read " + sparse + ": it is 2 GiB, too large: this file may hold at most 1 GiB",
	}
	for path, want := range cases {
		code, _, errOut := bounded(t, "logs", path)
		assert.Equal(t, exitUsage, code, path)
		assert.Equal(t, want, strings.TrimSpace(errOut))
		requireOneLine(t, errOut)
	}
}

// chaos check refuses a history that is /dev/zero, a link to it, or a
// 2 GiB file of zeros (its first line is no JSON object) in one line with
// exit 254, and writes nothing.
func TestCheckRefusesEndlessAndHugeHistories(t *testing.T) {
	dir := t.TempDir()
	linked := filepath.Join(dir, "linked")
	require.NoError(t, os.MkdirAll(linked, 0o755))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(linked, "history.jsonl")))
	sparse := sparseFile(t, filepath.Join(dir, "sparse"), "history.jsonl")
	cases := map[string]string{
		"/dev/zero": "read /dev/zero: it is a character device, not a regular file: give a file",
		linked:      "it is a character device, not a regular file: give a file",
		sparse:      sparse + ":1: a line of over 1048576 bytes that is not a JSON object: it begins with \"\\x00\\x00",
	}
	for path, want := range cases {
		code, _, errOut := bounded(t, "check", path)
		assert.Equal(t, exitUsage, code, path)
		assert.Contains(t, errOut, want)
		requireOneLine(t, errOut)
	}
	assert.NoFileExists(t, filepath.Join(linked, "results.json"))
	assert.NoFileExists(t, filepath.Join(dir, "sparse", "results.json"))
}

// An event log that is a link to /dev/zero, or a 2 GiB file of zeros,
// leaves the raft check unknown with the reason, at once; so does a
// test.json that is a link to /dev/zero leave the report without it.
func TestCheckRefusesEndlessAndHugeEventLogs(t *testing.T) {
	linked := runDir(t, goodRegister)
	events := filepath.Join(linked, "nodes", "n1", "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(events), 0o755))
	require.NoError(t, os.Symlink("/dev/zero", events))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(linked, "test.json")))
	sparse := runDir(t, goodRegister)
	sparseEvents := sparseFile(t, filepath.Join(sparse, "nodes", "n1"), "events.jsonl")
	cases := map[string]string{
		linked: "the event logs cannot be read: read " + events + ": it is a character device, not a regular file: give a file",
		sparse: "the event logs cannot be read: " + sparseEvents + ": events line 1: longer than 1048576 bytes",
	}
	for dir, want := range cases {
		code, out, errOut := bounded(t, "check", dir)
		assert.Equal(t, exitUnknown, code, errOut)
		assert.Contains(t, out, "raft: unknown")
		assert.Contains(t, out, want)
	}
}
