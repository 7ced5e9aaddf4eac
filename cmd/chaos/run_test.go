package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Bad input is refused with exit 254 before anything starts.
func TestRunRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"run", "--no-such-flag"},
		{"run", "--concurrency", "0"},
		{"run", "--concurrency", "many"},
		{"run", "--time-limit", "-1s"},
		{"run", "--nodes-file", filepath.Join(dir, "missing")},
		{"run", "--nodes", "a,b,a"},
		{"run", "--nodes", "a", "--nodes-file", blocked},
		{"run", "--nemesis", "kill,flood"},
		{"run", "--nemesis-interval", "0s"},
		{"run", "--db", "mysql"},
		{"run", "--workload", "queue"},
		{"run", "--db", "etcd"},
		{"run", "--test-count", "0"},
		{"run", "--keys", "0"},
	}
	for _, args := range cases {
		if got := run(append(args, "--store", store)); got != exitUsage {
			t.Errorf("chaos %v: exit %d, want %d", args, got, exitUsage)
		}
	}
	if got := run([]string{"run", "--store", filepath.Join(blocked, "sub"), "--time-limit", "1s"}); got != exitUsage {
		t.Errorf("unwritable store: exit %d, want %d", got, exitUsage)
	}
	if entries, _ := os.ReadDir(store); len(entries) > 0 {
		t.Errorf("bad input wrote into the store: %v", entries)
	}
}
