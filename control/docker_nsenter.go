package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"chaos/internal/secret"
)

// Docker modes: how a dockerRemote runs commands (DockerConfig.Mode).
const (
	// DockerAuto is DockerNsenter when the Engine runs on this machine and
	// this process is root with nsenter at hand, else DockerExec.
	DockerAuto = ""
	// DockerExec runs each command with `docker exec`: through the Engine,
	// wherever it runs (about 0.1-0.2 s a command).
	DockerExec = "exec"
	// DockerNsenter runs each command from this machine in the container's
	// namespaces (mount, UTS, IPC, network, PID) and cgroups, with nsenter:
	// a few milliseconds a command, and it reaches a paused container.
	DockerNsenter = "nsenter"
)

// nsTarget is a container's init process as this machine sees it, which
// nsenter joins; it changes when the container restarts.
type nsTarget struct {
	mu        sync.Mutex
	pid       int
	startTime string   // field 22 of /proc/PID/stat: tells a reused pid
	cgroups   []string // the cgroup.procs files of its cgroups
	freezer   string   // the file that says whether its cgroup is frozen
}

// engineAddr is the address of cfg's Engine: cfg.Host, else DOCKER_HOST,
// else "" (the docker command's default, a socket on this machine).
func engineAddr(cfg DockerConfig) string {
	if cfg.Host != "" {
		return cfg.Host
	}
	return os.Getenv("DOCKER_HOST")
}

// localEngine says whether the Engine of cfg runs on this machine, so that
// its containers' processes are this machine's.
func localEngine(cfg DockerConfig) bool {
	host := engineAddr(cfg)
	return host == "" || strings.HasPrefix(host, "unix://")
}

// pickMode is the mode cfg asks for, with DockerAuto decided.
func pickMode(cfg DockerConfig) (string, error) {
	switch cfg.Mode {
	case DockerExec:
		return DockerExec, nil
	case DockerNsenter, DockerAuto:
		_, err := exec.LookPath("nsenter")
		ok := err == nil && os.Geteuid() == 0 && localEngine(cfg)
		if ok {
			return DockerNsenter, nil
		}
		if cfg.Mode == DockerNsenter {
			return "", fmt.Errorf("docker mode nsenter needs root, nsenter (util-linux) and the Engine on this machine")
		}
		return DockerExec, nil
	}
	return "", fmt.Errorf("docker mode %q: want %q, %q or %q", cfg.Mode, DockerAuto, DockerExec, DockerNsenter)
}

// target is the container's init process, looked up again when the one
// known has gone (the container restarted). A container that is not
// running has none.
func (r *dockerRemote) target(ctx context.Context) (int, []string, error) {
	t := &r.ns
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pid != 0 && procStartTime(t.pid) == t.startTime {
		return t.pid, t.cgroups, t.frozen()
	}
	out, stderr, err := r.docker(ctx, nil, "inspect", "--type", "container", "--format", "{{.State.Status}} {{.State.Pid}}", r.container)
	if err != nil {
		return 0, nil, r.dialError(stderr, err)
	}
	f := strings.Fields(string(out))
	pid := 0
	if len(f) == 2 {
		pid, _ = strconv.Atoi(f[1])
	}
	if pid <= 0 || f[0] == "exited" || f[0] == "created" || f[0] == "dead" {
		return 0, nil, &NotRunningError{State: strings.Join(f[:min(1, len(f))], "")}
	}
	t.pid, t.startTime = pid, procStartTime(pid)
	t.cgroups, t.freezer = cgroupProcs(pid)
	return t.pid, t.cgroups, t.frozen()
}

// errPaused is a command refused because the container is paused: it
// would freeze with it, as `docker exec` refuses.
var errPaused = errors.New("the container is paused: unpause it first (`docker unpause`, or `chaos heal`)")

// frozen is errPaused when the container's cgroup is frozen (docker pause).
func (t *nsTarget) frozen() error {
	b, err := os.ReadFile(t.freezer)
	if err != nil {
		return nil
	}
	state := strings.TrimSpace(string(b))
	if state == "FROZEN" || state == "FREEZING" || state == "1" {
		return errPaused
	}
	return nil
}

// procStartTime is field 22 of /proc/pid/stat (after the command's closing
// parenthesis), "" when the process is gone.
func procStartTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// cgroupProcs are the cgroup.procs files, under /sys/fs/cgroup, of the
// cgroups process pid is in (cgroup v1 hierarchies and v2), those that
// exist: writing a pid into each moves that process into the container's
// cgroups, under its limits. freezer is the file that says whether they
// are frozen: v1's freezer.state, or v2's cgroup.freeze.
func cgroupProcs(pid int) (files []string, freezer string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil, ""
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var dirs []string
		switch {
		case f[1] == "":
			dirs = []string{"unified", ""}
		case strings.HasPrefix(f[1], "name="):
			dirs = []string{strings.TrimPrefix(f[1], "name=")}
		default:
			dirs = append([]string{f[1]}, strings.Split(f[1], ",")...)
		}
		for _, d := range dirs {
			dir := filepath.Join("/sys/fs/cgroup", d, f[2])
			if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
				continue
			}
			files = append(files, filepath.Join(dir, "cgroup.procs"))
			switch {
			case f[1] == "freezer":
				freezer = filepath.Join(dir, "freezer.state")
			case f[1] == "" && freezer == "":
				freezer = filepath.Join(dir, "cgroup.freeze")
			}
			break
		}
	}
	return files, freezer
}

// nsenterLine is the command line, for this machine's sh, that moves
// itself into cgroups and runs cmd with the container's sh in the
// namespaces of process pid.
func nsenterLine(pid int, cgroups []string, cmd string) string {
	var b strings.Builder
	for _, f := range cgroups {
		b.WriteString("echo $$ > " + ShellQuote(f) + " 2>/dev/null; ")
	}
	fmt.Fprintf(&b, "exec nsenter -t %d -m -u -i -n -p -- /bin/sh -c %s", pid, ShellQuote(cmd))
	return b.String()
}

// containerEnv is the environment of commands run with nsenter: a
// container's usual PATH, and nothing of this machine's.
func containerEnv() []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}
}

// runNsenter implements Run in DockerNsenter mode: like the local Remote
// (a process group of its own, killed whole when ctx ends), inside the
// container.
func (r *dockerRemote) runNsenter(ctx context.Context, what, cmd string) (Result, error) {
	pid, cgroups, err := r.target(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %s: %w", r.host, what, err)
	}
	return runGroup(ctx, r.host, what, []string{"sh", "-c", nsenterLine(pid, cgroups, cmd)}, containerEnv())
}

// NetSide is the Remote for commands that act on r's host's network
// (iptables, tc, ip, ss) with this machine's own tools: for a container
// reached in nsenter mode they run here, in its network namespace alone,
// so that its image needs none of them and they work while it is paused;
// for a container whose Engine is on another machine (DOCKER_HOST over
// TCP or SSH) the Docker host is out of reach, and every command fails
// with a *NetOutOfReachError; for any other host it is r itself. Files
// move as r moves them.
func NetSide(r Remote) Remote {
	d, ok := r.(*dockerRemote)
	switch {
	case ok && d.mode == DockerNsenter:
		return &netSideRemote{d}
	case ok && !localEngine(d.cfg):
		return &netOutOfReach{d}
	}
	return r
}

// NotRunningError is why a command in nsenter mode did not run: the
// container is stopped (exited, created, dead), and its namespaces with
// it; a network fault has nothing to act on or heal there until it starts
// again, in new ones.
type NotRunningError struct {
	// State is the container's state.
	State string
}

func (e *NotRunningError) Error() string { return "the container is " + e.State + ", not running" }

// NetOutOfReach is NetMechanism's answer for a container whose Engine is
// on another machine: its network is out of reach.
const NetOutOfReach = "out-of-reach"

// NetMechanism says how NetSide(r) reaches r's network: "nsenter" for a
// container's namespace entered from this machine, NetOutOfReach for a
// container whose Engine is on another machine, "" for r's own shell.
func NetMechanism(r Remote) string {
	switch NetSide(r).(type) {
	case *netSideRemote:
		return DockerNsenter
	case *netOutOfReach:
		return NetOutOfReach
	}
	return ""
}

// NetOutOfReachError is why a command on the network side of a container
// whose Engine is on another machine did not run: the network faults
// enter the container's network namespace from the Docker host, and
// chaos does not run there; the Engine's API can kill, pause and restart,
// not cut links.
type NetOutOfReachError struct {
	// Host is the node's host; Engine the Engine's address.
	Host, Engine string
}

func (e *NetOutOfReachError) Error() string {
	return fmt.Sprintf("the Docker host is out of reach (the Engine at %s is on another machine): "+
		"network faults need chaos on the Docker host, to enter the container's network namespace", e.Engine)
}

// netOutOfReach is the network side of a container whose Engine is on
// another machine: it runs nothing.
type netOutOfReach struct{ *dockerRemote }

func (n *netOutOfReach) Run(context.Context, string) (Result, error) {
	return Result{}, &NetOutOfReachError{Host: n.host, Engine: engineAddr(n.cfg)}
}

// netSideRemote runs commands in a container's network namespace with
// this machine's file system and tools.
type netSideRemote struct{ *dockerRemote }

func (n *netSideRemote) Run(ctx context.Context, cmd string) (Result, error) {
	what := "`" + clip(firstLine(cmd), 80) + "`"
	if n.closed.Load() {
		return Result{}, n.errClosed(what)
	}
	pid, _, err := n.target(ctx)
	if err != nil && !errors.Is(err, errPaused) {
		return Result{}, fmt.Errorf("%s: %s: %w", n.host, what, err)
	}
	argv := []string{"nsenter", "-t", strconv.Itoa(pid), "-n", "--", "sh", "-c", cmd}
	return runGroup(ctx, n.host, what, argv, secret.Environ(os.Environ()))
}
