package vdsoclock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Started checks that pid is the process a node's start record names: the
// record (db's NAME.started, "PID STARTTIME") holds pid and the start
// time /proc/PID/stat gives it, so that a pid reused by another process,
// or any process chaos did not start, is refused.
func Started(pid int, record string) error {
	b, err := os.ReadFile(record)
	if err != nil {
		return fmt.Errorf("the start record %s: %w", record, err)
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 || fields[0] != strconv.Itoa(pid) {
		return fmt.Errorf("process %d is not the one %s records (%q): refused, only chaos's node processes are patched", pid, record, strings.TrimSpace(string(b)))
	}
	start, _, err := statOf(pid)
	if err != nil {
		return err
	}
	if start != fields[1] {
		return fmt.Errorf("process %d started at %s, not at %s as %s records: another process reused its pid; refused", pid, start, fields[1], record)
	}
	return nil
}

// statOf reads pid's start time (field 22 of /proc/PID/stat, in clock
// ticks since boot) and its parent's pid.
func statOf(pid int) (start string, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", 0, fmt.Errorf("process %d: %w", pid, errExited)
		}
		return "", 0, err
	}
	// The command name (field 2) is in parentheses and may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:])) // from field 3, the state
	if len(f) < 20 {
		return "", 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ppid, err = strconv.Atoi(f[1])
	return f[19], ppid, err
}

// Tree is pid and every process descended from it, pid first, then each
// process's children in the order /proc lists them: a node started
// through a shell, or one that forks helpers, has its clock read in all
// of them.
func Tree(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, err := statOf(p); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		for _, c := range children[tree[i]] {
			if !slices.Contains(tree, c) {
				tree = append(tree, c)
			}
		}
	}
	return tree, nil
}
