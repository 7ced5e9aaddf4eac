package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// fakeSystem is a System that records every call that acts on or queries
// the machine as a line of a transcript, and models just enough of a
// machine for the testbed to read back what it did: links, network
// namespaces, FORWARD rules, processes and directories. Reads of /proc are
// answered from the model but not recorded: they are polling, not plan.
type fakeSystem struct {
	calls []string

	links   map[string]bool
	netns   map[string]bool
	rules   map[string]bool // iptables rules, joined by spaces
	dirs    map[string]bool // directories of the machine
	procs   map[int]*fakeProc
	nextPid int

	routes    string          // answer to ip -j -4 route show
	missing   map[string]bool // commands LookPath does not find
	failOn    string          // a Run whose command line starts with this fails
	sshdExits bool            // started processes write to their log and exit at once
}

type fakeProc struct {
	cmdline string // argv joined by NULs, as /proc/<pid>/cmdline
	alive   bool
}

// newFakeSystem is a machine with lo and eth0, /opt, /var and /var/lib, a
// default route, br_netfilter off and every requirement installed.
func newFakeSystem() *fakeSystem {
	return &fakeSystem{
		links:   map[string]bool{"lo": true, "eth0": true},
		netns:   map[string]bool{},
		rules:   map[string]bool{},
		dirs:    map[string]bool{"/opt": true, "/var": true, "/var/lib": true, "/tmp": true},
		procs:   map[int]*fakeProc{},
		nextPid: 1001,
		routes:  `[{"dst":"default","gateway":"192.168.1.1","dev":"eth0"},{"dst":"192.168.1.0/24","dev":"eth0"}]`,
		missing: map[string]bool{},
	}
}

func (f *fakeSystem) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// transcript is the calls, one per line, with dir written $D and prefix $P
// so it does not depend on the test's temporary directory, and the host
// script (testdata/host-script.sh) written $SCRIPT.
func (f *fakeSystem) transcript(dir, prefix string) string {
	s := strings.Join(f.calls, "\n") + "\n"
	s = strings.ReplaceAll(s, strconv.Quote(hostScript()), "$SCRIPT")
	s = strings.ReplaceAll(s, dir, "$D")
	return strings.ReplaceAll(s, prefix, "$P")
}

func (f *fakeSystem) Run(_ context.Context, argv ...string) (string, error) {
	line := strings.Join(argv, " ")
	f.record("run %s", quoteArgs(argv))
	if f.failOn != "" && strings.HasPrefix(line, f.failOn) {
		return "", fmt.Errorf("%s: exit status 2: RTNETLINK answers: Operation not permitted", line)
	}
	return f.apply(argv)
}

// apply changes the model as the command would change the machine.
func (f *fakeSystem) apply(argv []string) (string, error) {
	line := strings.Join(argv, " ")
	switch {
	case line == "ip -j -4 route show":
		return f.routes, nil
	case line == "ip -j link show":
		return jsonNames("ifname", f.links), nil
	case line == "ip -j netns list":
		return jsonNames("name", f.netns), nil
	case strings.HasPrefix(line, "ip link add "):
		return "", create(f.links, argv[3])
	case strings.HasPrefix(line, "ip netns add "):
		return "", create(f.netns, argv[3])
	case strings.HasPrefix(line, "ip link del "):
		return "", remove(f.links, argv[3])
	case strings.HasPrefix(line, "ip netns del "):
		return "", remove(f.netns, argv[3])
	case strings.HasPrefix(line, "iptables -w 5 -I "):
		f.rules[strings.Join(argv[4:], " ")] = true
	case strings.HasPrefix(line, "iptables -w 5 -C "):
		if !f.rules[strings.Join(argv[4:], " ")] {
			return "", errors.New("iptables: Bad rule (does a matching rule exist in that chain?)")
		}
	case strings.HasPrefix(line, "iptables -w 5 -D "):
		return "", remove(f.rules, strings.Join(argv[4:], " "))
	}
	return "", nil
}

func create(set map[string]bool, name string) error {
	if set[name] {
		return fmt.Errorf("%s: File exists", name)
	}
	set[name] = true
	return nil
}

func remove(set map[string]bool, name string) error {
	if !set[name] {
		return fmt.Errorf("cannot find %s", name)
	}
	delete(set, name)
	return nil
}

// jsonNames is ip's JSON for a list of objects with the names in set.
func jsonNames(key string, set map[string]bool) string {
	var list []map[string]string
	for _, name := range slices.Sorted(maps.Keys(set)) {
		list = append(list, map[string]string{key: name})
	}
	b, _ := json.Marshal(list)
	return string(b)
}

func (f *fakeSystem) Start(l Launch) (Daemon, error) {
	f.record("start ns=%s dir=%s log=%s: %s", strings.Join(l.Namespaces, ","), l.Dir, l.Log, quoteArgs(l.Argv))
	pid := f.nextPid
	f.nextPid++
	f.procs[pid] = &fakeProc{cmdline: strings.Join(l.Argv, "\x00") + "\x00", alive: !f.sshdExits}
	exited := make(chan struct{})
	if f.sshdExits {
		if err := os.WriteFile(l.Log, []byte("fake sshd: cannot bind\nfake sshd: exiting\n"), 0o644); err != nil {
			return Daemon{}, err
		}
		close(exited)
	}
	return Daemon{Pid: pid, Exited: exited}, nil
}

func (f *fakeSystem) LookPath(file string) (string, error) {
	if f.missing[file] {
		return "", fmt.Errorf("exec: %q: executable file not found in $PATH", file)
	}
	return "/usr/sbin/" + file, nil
}

func (f *fakeSystem) ReadFile(path string) ([]byte, error) {
	var pid int
	var file string
	if _, err := fmt.Sscanf(strings.ReplaceAll(path, "/", " "), " proc %d %s", &pid, &file); err == nil {
		if p := f.procs[pid]; p != nil && p.alive {
			switch file {
			case "stat":
				return []byte(strconv.Itoa(pid) + " (sshd) S 1 " + strconv.Itoa(pid)), nil
			case "cmdline":
				return []byte(p.cmdline), nil
			}
		}
	}
	return nil, fs.ErrNotExist
}

func (f *fakeSystem) Pids() ([]int, error) {
	return slices.Sorted(maps.Keys(f.procs)), nil
}

func (f *fakeSystem) Kill(pid int) error {
	f.record("kill %d", pid)
	if p := f.procs[pid]; p != nil {
		p.alive = false
	}
	return nil
}

func (f *fakeSystem) Mkdir(path string) error {
	f.record("mkdir %s", path)
	if f.dirs[path] {
		return &fs.PathError{Op: "mkdir", Path: path, Err: fs.ErrExist}
	}
	f.dirs[path] = true
	return nil
}

func (f *fakeSystem) Remove(path string) error {
	f.record("rmdir %s", path)
	if !f.dirs[path] {
		return &fs.PathError{Op: "remove", Path: path, Err: fs.ErrNotExist}
	}
	delete(f.dirs, path)
	return nil
}

func (f *fakeSystem) SSHBanner(_ context.Context, addr string, _ time.Duration) (string, error) {
	f.record("ssh-banner %s", addr)
	for _, p := range f.procs {
		if p.alive && strings.Contains(p.cmdline, "\x00"+f.hostName(addr)+"\x00") {
			return "SSH-2.0-OpenSSH_9.2p1 fake", nil
		}
	}
	return "", fmt.Errorf("dial tcp %s: connect: connection refused", addr)
}

// hostName is the name of the host at addr in the fake's 10.77.0.0/24
// testbeds: 10.77.0.12:22 is n2.
func (f *fakeSystem) hostName(addr string) string {
	host, _, _ := strings.Cut(addr, ":")
	last := host[strings.LastIndexByte(host, '.')+1:]
	k, _ := strconv.Atoi(last)
	return "n" + strconv.Itoa(k-hostOffset)
}

// alive returns the pids of live processes, sorted.
func (f *fakeSystem) alive() []int {
	var pids []int
	for pid, p := range f.procs {
		if p.alive {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// quoteArgs joins argv with spaces, quoting the arguments a shell would
// need quoted (the host script) so each call stays one line.
func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \n\"'$%") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
