package testbed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// daemonPath is the PATH of started processes: theirs does not depend on the
// caller's environment.
const daemonPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// machine is the real System.
type machine struct{}

// NewSystem returns the System that acts on this machine.
func NewSystem() System { return machine{} }

// Platform reports whether this machine can run a testbed: on Linux it can,
// given root and the Missing requirements.
func Platform() error { return nil }

func (machine) Run(ctx context.Context, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Start starts l in its own session, so the terminal's signals do not reach
// it, and reaps it in the background while this program runs.
func (machine) Start(l Launch) (Daemon, error) {
	flags, err := cloneFlags(l.Namespaces)
	if err != nil {
		return Daemon{}, err
	}
	log, err := os.OpenFile(l.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Daemon{}, fmt.Errorf("start %s: %w", l.Argv[0], err)
	}
	defer log.Close()
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Dir = l.Dir
	cmd.Env = []string{daemonPath}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: flags}
	if err := cmd.Start(); err != nil {
		return Daemon{}, fmt.Errorf("start %s: %w", strings.Join(l.Argv, " "), err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status says nothing the log does not
		close(exited)
	}()
	return Daemon{Pid: cmd.Process.Pid, Exited: exited}, nil
}

// cloneFlags maps namespace names to the clone flags that make new ones.
func cloneFlags(namespaces []string) (uintptr, error) {
	var flags uintptr
	for _, ns := range namespaces {
		switch ns {
		case "mount":
			flags |= syscall.CLONE_NEWNS
		case "pid":
			flags |= syscall.CLONE_NEWPID
		case "uts":
			flags |= syscall.CLONE_NEWUTS
		default:
			return 0, fmt.Errorf("unknown namespace %q", ns)
		}
	}
	return flags, nil
}

// LookPath searches the sbin directories after PATH: sshd and ip live there
// and a non-root PATH often lacks them.
func (machine) LookPath(file string) (string, error) {
	path, err := exec.LookPath(file)
	if err != nil {
		for _, dir := range [...]string{"/usr/local/sbin", "/usr/sbin", "/sbin"} {
			if p, e := exec.LookPath(filepath.Join(dir, file)); e == nil {
				path, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return "", err
	}
	return filepath.Abs(path)
}

func (machine) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

func (machine) Pids() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

func (machine) Kill(pid int) error {
	err := syscall.Kill(pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kill %d: %w", pid, err)
	}
	return nil
}

func (machine) Mkdir(path string) error { return os.Mkdir(path, 0o755) }

func (machine) Remove(path string) error { return os.Remove(path) }

func (machine) SSHBanner(ctx context.Context, addr string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetReadDeadline(deadline); err != nil {
			return "", err
		}
	}
	// RFC 4253 4.2: the identification line is at most 255 bytes.
	line, err := bufio.NewReaderSize(io.LimitReader(conn, 256), 256).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read banner from %s: %w", addr, err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
