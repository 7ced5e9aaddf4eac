package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input is refused with exit 254 and a line naming the flag, before
// any node starts.
func TestBenchRefusesBadInput(t *testing.T) {
	cases := map[string][]string{
		"--clients":          {"bench", "--clients", "0"},
		"--duration":         {"bench", "--duration", "0s"},
		"--read-ratio":       {"bench", "--read-ratio", "1.5"},
		"--value-size":       {"bench", "--value-size", "-1"},
		"--keys":             {"bench", "--keys", "0"},
		"--read-consistency": {"bench", "--read-consistency", "eventual"},
		"--failover":         {"bench", "--failover", "-2"},
		"mysql":              {"bench", "--db", "mysql"},
		"postgres":           {"bench", "--compare", "postgres"},
		"twice":              {"bench", "--nodes", "a,b,a"},
		"unknown flag":       {"bench", "--no-such-flag"},
		"--storage-faults":   {"bench", "--storage-faults", "--compare", "etcd"},
		"--vdso-clock":       {"bench", "--vdso-clock", "--storage-faults"},
		"--rounds":           {"bench", "--rounds", "0"},
	}
	for want, args := range cases {
		code, _, errOut := execute(t, args...)
		if code != exitUsage {
			t.Errorf("chaos %v: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(errOut, want) {
			t.Errorf("chaos %v: error %q does not name %q", args, errOut, want)
		}
	}
}

// --failover needs a system that names its leader: a description without
// a leader probe is refused before anything starts.
func TestBenchFailoverNeedsALeaderProbe(t *testing.T) {
	good, err := os.ReadFile("../../examples/systems/chaos-node.yaml")
	require.NoError(t, err)
	text := strings.Replace(string(good), "leader: {path: /status, self: id, leader: leader}\n", "", 1)
	require.NotEqual(t, string(good), text)
	file := filepath.Join(t.TempDir(), "noleader.yaml")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	code, _, errOut := execute(t, "bench", "--db", file, "--failover", "1")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "has no leader probe")
}

// A client command gets values as JSON numbers: --value-size is refused
// for it rather than silently not applied.
func TestBenchValueSizeNeedsTextValues(t *testing.T) {
	code, _, errOut := execute(t, "bench", "--db", "../../examples/systems/chaos-node.yaml", "--value-size", "64")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "leave --value-size out")
}
