package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// sshPort is where every host's sshd listens.
const sshPort = "22"

// sshdConfig is host h's sshd configuration: root logs in with the testbed's
// key only, and nothing needs a file of the machine's own sshd.
// StrictModes is off because the testbed directory may sit under a
// world-writable one such as /tmp.
func sshdConfig(h Host, hostKey, authorizedKeys string) string {
	return fmt.Sprintf(`# sshd of testbed host %[1]s, written by chaos testbed up.
ListenAddress %[2]s
Port %[3]s
HostKey %[4]s
AuthorizedKeysFile %[5]s
PidFile none
UsePAM no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UseDNS no
PrintMotd no
MaxStartups 100:30:200
MaxSessions 100
Subsystem sftp internal-sftp
`, h.Name, h.Addr, sshPort, hostKey, authorizedKeys)
}

// hostScript turns a process that just entered the host's namespaces, with
// the testbed directory as its working directory, into the host: it
// isolates the mounts, mounts a /proc of the new PID namespace, sets the
// hostname, gives the host a private /run holding the testbed directory at
// insideDir, bind mounts the private directories, hides this machine's
// root shell start-up files, and becomes sshd. Mount
// sources are relative to the working directory, which stays reachable
// whatever the mounts hide. Arguments: $1 hostname, $2 insideDir, $3 the
// sshd_config as the host sees it, $4 the sshd binary.
func hostScript() string {
	lines := []string{
		"set -eu",
		"mount --make-rprivate /",
		"mount -t proc proc /proc",
		`printf %s "$1" > /proc/sys/kernel/hostname`,
		"mount -t tmpfs -o mode=0755,size=16m tmpfs /run",
		`mkdir -m 0755 /run/sshd "$2"`,
		`mount --bind . "$2"`,
	}
	for _, p := range privateDirs() {
		lines = append(lines, fmt.Sprintf(`mount --bind "%s/$1/%s" %s`, hostsDir, p.Name, p.Target))
	}
	// The hosts share this machine's /root, but not its shell start-up
	// files: a real host has its own, and this machine's may be slow (a
	// pyenv init costs a second on every command sshd runs).
	lines = append(lines, `for f in /root/.bashrc /root/.profile /root/.bash_profile; do `+
		`if [ -f "$f" ]; then mount --bind /dev/null "$f"; fi; done`)
	lines = append(lines, `exec "$4" -D -e -f "$3"`)
	return strings.Join(lines, "\n")
}

// hostLaunch is how host h of the testbed in dir is started: in its
// network namespace (entered by ip) and new mount, PID and UTS namespaces,
// running hostScript.
func hostLaunch(dir, prefix string, h Host, sshd string) Launch {
	return Launch{
		Argv: []string{"ip", "netns", "exec", h.Netns,
			"sh", "-c", hostScript(), "sh", h.Name, insideDir(prefix), h.SSHDConfig, sshd},
		Dir:        dir,
		Namespaces: []string{"mount", "pid", "uts"},
		Log:        filepath.Join(hostDir(dir, h.Name), sshdLogFile),
	}
}

// startHosts starts every host and records its pid in the state file.
func startHosts(dir string, sys System, st *State, sshd string) ([]Daemon, error) {
	var daemons []Daemon
	for i, h := range st.Hosts {
		d, err := sys.Start(hostLaunch(dir, st.Prefix, h, sshd))
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", h.Name, err)
		}
		st.Hosts[i].Pid = d.Pid
		if err := saveState(dir, *st); err != nil {
			return nil, err
		}
		daemons = append(daemons, d)
	}
	return daemons, nil
}

// Polling bounds: bannerTimeout for one read of an sshd's banner,
// pollInterval between two looks at sshds (Up) or killed processes (Down).
const (
	bannerTimeout = time.Second
	pollInterval  = 50 * time.Millisecond
)

// waitReady waits until every host's sshd sends its banner, or fails when a
// host's process exits or timeout passes.
func waitReady(ctx context.Context, dir string, sys System, hosts []Host, daemons []Daemon, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for i, h := range hosts {
		if err := waitHost(ctx, dir, sys, h, daemons[i]); err != nil {
			return err
		}
	}
	return nil
}

// waitHost polls h's sshd until it answers with an SSH banner.
func waitHost(ctx context.Context, dir string, sys System, h Host, d Daemon) error {
	addr := net.JoinHostPort(h.Addr, sshPort)
	for {
		banner, err := sys.SSHBanner(ctx, addr, bannerTimeout)
		if err == nil && strings.HasPrefix(banner, "SSH-") {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("answered %q, not an SSH banner", banner)
		}
		select {
		case <-d.Exited:
			return fmt.Errorf("%s: sshd exited: %s", h.Name, logTail(dir, h))
		case <-ctx.Done():
			return fmt.Errorf("%s: sshd did not answer on %s: %w (%s)", h.Name, addr, err, logTail(dir, h))
		case <-time.After(pollInterval):
		}
	}
}

// logTail is the end of host h's sshd log, for error messages.
func logTail(dir string, h Host) string {
	path := filepath.Join(hostDir(dir, h.Name), sshdLogFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || len(b) == 0 {
		return "its log " + path + " is empty"
	}
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return "the end of " + path + ": " + strings.Join(lines, " | ")
}
