package main

import (
	"strings"
	"testing"
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
