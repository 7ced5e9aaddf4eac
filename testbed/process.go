package testbed

import (
	"bytes"
	"strconv"
)

// running reports whether host h's process is alive (see alive).
func running(sys System, h Host) bool {
	return h.Pid > 0 && alive(sys, h.Pid, h.SSHDConfig)
}

// hostProcesses returns the live processes Up started for the testbed with
// prefix: those whose command line names a file of the testbed as its hosts
// see it, from `ip netns exec` through sshd. Finding them by name rather
// than by recorded pid also finds a host started by an Up that died before
// it could record the pid. Processes inside a host are not listed: they go
// with the host's init.
func hostProcesses(sys System, prefix string) ([]int, error) {
	pids, err := sys.Pids()
	if err != nil {
		return nil, err
	}
	marker := insideDir(prefix) + "/" + hostsDir + "/"
	var found []int
	for _, pid := range pids {
		if alive(sys, pid, marker) {
			found = append(found, pid)
		}
	}
	return found, nil
}

// alive reports whether pid is a live process whose command line contains
// marker, so a process that reused the pid is not taken for one of ours. A
// zombie counts as gone: it holds no namespace, socket or mount, and on
// machines whose init reaps orphans late it stays in the process table a
// while.
func alive(sys System, pid int, marker string) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	stat, err := sys.ReadFile(proc + "/stat")
	if err != nil || processState(stat) == 'Z' {
		return false
	}
	cmdline, err := sys.ReadFile(proc + "/cmdline")
	return err == nil && bytes.Contains(cmdline, []byte(marker))
}

// processState is the state letter of a /proc/<pid>/stat line, which comes
// after the command name in parentheses (that may itself hold parentheses).
func processState(stat []byte) byte {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}
